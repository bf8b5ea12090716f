"""fnad_nn: stateless layers over parameter pytrees."""
