"""Where data files come from: an explicit path, `$FNAD_DATA_DIR`, the cache, or a download.

Each data set is a directory of files named as upstream names them. A file found in a given
directory is used as it is (readers validate the contents; local copies may be recompressed
or uncompressed, so their bytes need not match the published archive). A downloaded file is
checked against the SHA-256 published for the upstream archive before it enters the cache.
"""

import hashlib
import os
import tempfile
import urllib.request
from pathlib import Path

from fnad.extend import cache_dir, setting

__all__ = ["SOURCES", "MissingDataError", "data_dirs", "cache_dir", "resolve_files", "download",
           "offline"]

_MNIST = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://yann.lecun.com/exdb/mnist/")
_FASHION = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
            "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/")
_SHAKESPEARE = ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
                "tinyshakespeare/",)

# data set -> file -> (base URLs tried in order, SHA-256 of the published file)
SOURCES = {
    "mnist": {
        "train-images-idx3-ubyte.gz":
            (_MNIST, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
        "train-labels-idx1-ubyte.gz":
            (_MNIST, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        "t10k-images-idx3-ubyte.gz":
            (_MNIST, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        "t10k-labels-idx1-ubyte.gz":
            (_MNIST, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
    },
    "fashion-mnist": {
        "train-images-idx3-ubyte.gz":
            (_FASHION, "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
        "train-labels-idx1-ubyte.gz":
            (_FASHION, "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
        "t10k-images-idx3-ubyte.gz":
            (_FASHION, "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
        "t10k-labels-idx1-ubyte.gz":
            (_FASHION, "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
    },
    "tinyshakespeare": {
        "input.txt":
            (_SHAKESPEARE, "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"),
    },
}


def data_dirs(name, path=None):
    """The directories searched for data set `name`, in order: `path` (if given, and only
    it), else `$FNAD_DATA_DIR/<name>` (if set), then `<cache_dir()>/<name>`."""
    if path is not None:
        return [Path(path)]
    dirs = []
    if setting("FNAD_DATA_DIR"):
        dirs.append(Path(setting("FNAD_DATA_DIR")) / name)
    dirs.append(cache_dir() / name)
    return dirs


def _find(directory, file):
    for candidate in (file, file[:-3] if file.endswith(".gz") else None):
        if candidate and (directory / candidate).is_file():
            return directory / candidate
    return None


def download(url, dest, sha256, *, opener=None):
    """Download `url` to `dest`, checking its SHA-256 before the file appears at `dest`.

    The bytes go to a temporary file next to `dest` and are renamed into place only when the
    checksum matches, so an interrupted or corrupt download never leaves a file behind.

    Args:
      url: any URL urllib opens (http, https, file).
      dest: the destination path; its directory is created.
      sha256: the expected hex digest.
      opener: optional `callable(url) -> file-like` (default `urllib.request.urlopen` with a
        60 s timeout).

    Returns:
      `dest` as a `Path`.

    Example:
      download("file:///tmp/input.txt", "/tmp/cache/input.txt", "86c4e6aa...")
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    opener = opener or (lambda u: urllib.request.urlopen(u, timeout=60))
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, opener(url) as response:
            for chunk in iter(lambda: response.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256:
            raise ValueError(f"download: {url} has SHA-256 {digest.hexdigest()}, expected "
                             f"{sha256}; the file was not saved. Try again, or download it "
                             f"by hand and put it at {dest}.")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return dest


def _fetch(name, file, opener):
    bases, sha256 = SOURCES[name][file]
    dest = cache_dir() / name / file
    errors = []
    for base in bases:
        try:
            return download(base + file, dest, sha256, opener=opener)
        except (OSError, ValueError) as e:   # URLError is an OSError
            errors.append(f"{base + file}: {e}")
    raise OSError("; ".join(errors))


class MissingDataError(FileNotFoundError):
    """Files of a data set that are neither on disk nor downloadable now.

    Attributes: `name` (the data set), `missing` (every missing file), `dirs` (the
    directories searched, in order), `why` (why nothing was downloaded). `str(error)` says
    where to put the files; a script can build its own message from the attributes.
    """

    def __init__(self, name, missing, dirs, why):
        self.name, self.missing, self.dirs, self.why = name, list(missing), list(dirs), why
        super().__init__(_missing_message(name, self.missing, self.dirs, why))


def offline():
    """Whether downloads are off for this process: `$FNAD_OFFLINE` is 1 (or true, yes, on;
    tests and machines without network set it, so that nothing tries to)."""
    return setting("FNAD_OFFLINE")


def _missing_message(name, missing, dirs, why):
    where = "\n".join(f"  {d / f}" for f in missing for d in dirs)
    urls = [b + f for f in missing for b in SOURCES.get(name, {}).get(f, ((),))[0]]
    return (f"{name}: {', '.join(missing)} not found. Looked for:\n{where}\n{why}\n"
            f"Put the files (gzip-compressed or not) in one of those directories, or set "
            f"FNAD_DATA_DIR to a directory holding '{name}/<file>', or pass path=..."
            + (f"\nThey are published at {', '.join(urls)}." if urls else ""))


def _why_not_downloaded(name, missing, path, download):
    if path is not None:
        return "Nothing is downloaded into a directory given explicitly (path=)."
    if not download:
        return "Downloading is off (download=False)."
    if offline():
        return "Downloading is off (FNAD_OFFLINE is set)."
    if any(f not in SOURCES.get(name, {}) for f in missing):
        return "There is no download address for them."
    return None


def resolve_files(name, files, *, path=None, download=True, opener=None):
    """Paths of `files` of data set `name`, downloading the missing ones into the cache.

    Args:
      name: a data set of `SOURCES` ("mnist", "fashion-mnist", "tinyshakespeare") or any
        name when `path` or `$FNAD_DATA_DIR` holds its files.
      files: file names (a name ending in ".gz" also matches the uncompressed file).
      path: optional directory; when given, only it is searched and nothing is downloaded.
      download: whether missing files may be downloaded (never when `$FNAD_OFFLINE` is set).
      opener: passed to `download` (tests use it to stay offline).

    Returns:
      A list of `Path`s, one per file.

    Raises:
      MissingDataError (a FileNotFoundError) naming every missing file and saying where to
      put them, when some are missing and cannot be downloaded.

    Example:
      [p] = resolve_files("tinyshakespeare", ["input.txt"])
    """
    dirs = data_dirs(name, path)
    found = {f: next((p for p in (_find(d, f) for d in dirs) if p is not None), None)
             for f in files}
    missing = [f for f in files if found[f] is None]
    if missing:
        why = _why_not_downloaded(name, missing, path, download)
        if why is not None:
            raise MissingDataError(name, missing, dirs, why)
        errors = []
        for f in missing:
            try:
                found[f] = _fetch(name, f, opener)
            except OSError as e:
                errors.append(str(e))
        still = [f for f in missing if found[f] is None]
        if still:
            raise MissingDataError(name, still, dirs, "The download failed (offline?): "
                                   + "; ".join(errors))
    return [found[f] for f in files]
