"""fnad_optim: optax-style optimizers and schedules."""
