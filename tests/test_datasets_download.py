"""Downloads (against a local HTTP server in a thread), checksums, safe extraction and `fetch`."""
import functools
import hashlib
import http.server
import io
import os
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from PIL import Image as PILImage

from hotstart.datasets import (ChecksumError, DatasetError, ImageFolders, Registry, download, extract,
                               fetch, load, register)
from hotstart.datasets import registry as registry_module
from hotstart.datasets.download import data_dir


@pytest.fixture
def server(tmp_path):
    """Serve tmp_path/"www" on 127.0.0.1:<free port>; yields (folder, base URL)."""
    www = tmp_path / "www"
    www.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield www, f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _png_bytes(color):
    buf = io.BytesIO()
    PILImage.new("RGB", (4, 4), color).save(buf, format="PNG")
    return buf.getvalue()


def _tarball(path: Path, members: dict[str, bytes], mode="w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path):
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_download_verified(server, tmp_path):
    www, url = server
    digest = _tarball(www / "toy.tgz", {"toy/a.txt": b"hello"})
    cache = tmp_path / "cache"
    path = download(url + "toy.tgz", digest, cache_dir=cache, progress=False)
    assert path.read_bytes() == (www / "toy.tgz").read_bytes()
    assert path.is_relative_to(cache) and path.name.endswith("-toy.tgz")
    (www / "toy.tgz").unlink()  # reused from the cache: no second request
    assert download(url + "toy.tgz", digest, cache_dir=cache, progress=False) == path
    assert [p.name for p in _files(cache)] == [path.name]  # no temp files left behind


def test_download_with_progress_bar(server, tmp_path, capsys):
    www, url = server
    digest = _tarball(www / "toy.tgz", {"toy/a.txt": b"x" * 5000})
    path = download(url + "toy.tgz", digest, cache_dir=tmp_path / "cache", progress=True)
    err = capsys.readouterr().err  # captured: not a terminal, so plain lines, not a \r bar
    assert path.is_file() and "\r" not in err
    assert err.splitlines() == [f"downloading toy.tgz (0.0 MiB) from {url}toy.tgz", "downloaded toy.tgz: 0.0 MiB"]


def test_download_wrong_checksum_leaves_nothing(server, tmp_path):
    www, url = server
    digest = _tarball(www / "toy.tgz", {"toy/a.txt": b"hello"})
    wrong = "0" * 64
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError) as info:
        download(url + "toy.tgz", wrong, cache_dir=cache, progress=False)
    message = str(info.value)
    assert url + "toy.tgz" in message and wrong in message and digest in message
    assert _files(cache) == []


def test_download_unknown_checksum_is_recorded(server, tmp_path):
    www, url = server
    digest = _tarball(www / "toy.tgz", {"toy/a.txt": b"hello"})
    with pytest.warns(UserWarning, match=digest):
        path = download(url + "toy.tgz", None, cache_dir=tmp_path / "c", progress=False)
    assert Path(str(path) + ".sha256").read_text().strip() == digest


def test_download_unknown_checksum_is_verified_on_the_next_use(server, tmp_path):
    """Trust on first use: the recorded hash is read back, for the cached file and a new download."""
    www, url = server
    digest = _tarball(www / "toy.tgz", {"toy/a.txt": b"hello"})
    cache = tmp_path / "c"
    with pytest.warns(UserWarning):
        path = download(url + "toy.tgz", None, cache_dir=cache, progress=False)
    original = path.read_bytes()

    path.write_bytes(original[:-5] + b"XXXXX")  # the cached file is damaged: fetched again, and checked
    assert download(url + "toy.tgz", None, cache_dir=cache, progress=False) == path
    assert path.read_bytes() == original

    (www / "toy.tgz").unlink()  # intact cache: no request at all
    assert download(url + "toy.tgz", None, cache_dir=cache, progress=False) == path

    changed = _tarball(www / "toy.tgz", {"toy/a.txt": b"something else"})  # the server's file changed
    path.unlink()
    with pytest.raises(ChecksumError) as info:
        download(url + "toy.tgz", None, cache_dir=cache, progress=False)
    message = str(info.value)
    assert digest in message and changed in message and str(path) + ".sha256" in message
    assert not path.exists() and [p.name for p in _files(cache)] == [path.name + ".sha256"]

    Path(str(path) + ".sha256").unlink()  # the documented way to accept the change
    with pytest.warns(UserWarning, match=changed):
        download(url + "toy.tgz", None, cache_dir=cache, progress=False)
    assert Path(str(path) + ".sha256").read_text().strip() == changed


def test_download_errors_name_the_url(server, tmp_path):
    _, url = server
    with pytest.raises(OSError, match="missing.tgz"):
        download(url + "missing.tgz", "0" * 64, cache_dir=tmp_path / "c", progress=False)
    assert _files(tmp_path / "c") == []
    with pytest.raises(ValueError, match="sha256"):
        download(url + "x.tgz", "abc", cache_dir=tmp_path / "c")
    with pytest.raises(ValueError, match="ftp"):
        download("ftp://example.com/x.tgz", None, cache_dir=tmp_path / "c")


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HOTSTART_DATA_DIR", str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("HOTSTART_DATA_DIR")
    default = data_dir()  # platformdirs' user cache, e.g. ~/.cache/hotstart/datasets on Linux
    assert default.name == "datasets" and "hotstart" in default.parts


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz", "w"])
def test_extract_tar(tmp_path, mode):
    archive = tmp_path / "a.tar"
    _tarball(archive, {"top/x/1.txt": b"one", "top/2.txt": b"two"}, mode=mode)
    out = extract(archive, tmp_path / "out")
    assert (out / "top" / "x" / "1.txt").read_bytes() == b"one"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # temp folder renamed
    with pytest.raises(FileExistsError, match="out"):
        extract(archive, tmp_path / "out")


def test_extract_zip(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("top/1.txt", "one")
    assert (extract(archive, tmp_path / "out") / "top" / "1.txt").read_text() == "one"


@pytest.mark.parametrize("name", ["../evil.txt", "ok/../../evil.txt", "/tmp/evil.txt"])
def test_extract_rejects_unsafe_names(tmp_path, name):
    archive = tmp_path / "bad.tgz"
    _tarball(archive, {"fine.txt": b"ok", name: b"pwned"})
    with pytest.raises(DatasetError, match="unsafe"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.txt").exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # temp folder cleaned up


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt"])
def test_extract_rejects_unsafe_zip_names(tmp_path, name):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("fine.txt", "ok")
        zf.writestr(zipfile.ZipInfo(name), "pwned")
    with pytest.raises(DatasetError, match="unsafe"):
        extract(archive, tmp_path / "out")


@pytest.mark.parametrize("kind, target", [(tarfile.SYMTYPE, "../../outside"), (tarfile.SYMTYPE, "/etc/passwd"),
                                          (tarfile.LNKTYPE, "../outside"), (tarfile.CHRTYPE, ""),
                                          (tarfile.FIFOTYPE, "")])
def test_extract_rejects_links_out_and_devices(tmp_path, kind, target):
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("top/link")
        info.type, info.linkname = kind, target
        tar.addfile(info)
    with pytest.raises(DatasetError, match="unsafe"):
        extract(archive, tmp_path / "out")


def test_extract_allows_links_inside(tmp_path):
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tar:
        data = b"real"
        info = tarfile.TarInfo("top/real.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("top/sub/link.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "../real.txt"
        tar.addfile(link)
    out = extract(archive, tmp_path / "out")
    assert (out / "top" / "sub" / "link.txt").read_bytes() == b"real"


def test_extract_rejects_non_archives(tmp_path):
    f = tmp_path / "x.tgz"
    f.write_bytes(b"not an archive")
    with pytest.raises(DatasetError, match="not a tar or zip"):
        extract(f, tmp_path / "out")


def _image_archive(www: Path) -> str:
    members = {f"toyset/{split}/{cls}/{i}.png": _png_bytes(color)
               for split in ("train", "val") for cls, color in (("red", (255, 0, 0)), ("blue", (0, 0, 255)))
               for i in range(2)}
    return _tarball(www / "toyset.tgz", members)


def test_fetch_and_load_a_remote_entry(server, tmp_path):
    www, url = server
    digest = _image_archive(www)
    reg = Registry()
    reg.register("toyset", lambda root, **kw: ImageFolders(root, train="train", valid="val", **kw),
                 url=url + "toyset.tgz", sha256=digest, folder="toyset", description="4+4 tiny images")
    cache = tmp_path / "cache"
    root = reg.fetch("toyset", cache_dir=cache, progress=False)
    assert root == cache / "toyset" / "toyset" and (root / "train" / "red").is_dir()
    (www / "toyset.tgz").unlink()  # already extracted: no network needed again
    data, (_, label) = reg.load("toyset", cache_dir=cache, progress=False)
    assert label.classes == ["blue", "red"] and len(data.split("valid")[0]) == 4
    assert data.inputs[0].getpixel((0, 0)) == (0, 0, 255)
    assert reg.catalog()[0]["remote"] is True


def test_fetch_through_the_default_registry(server, tmp_path, monkeypatch):
    www, url = server
    digest = _image_archive(www)
    monkeypatch.setenv("HOTSTART_DATA_DIR", str(tmp_path / "envcache"))
    register("toyset-test", lambda root: ImageFolders(root, valid="val"), url=url + "toyset.tgz",
             sha256=digest, folder="toyset")
    try:
        root = fetch("toyset-test", progress=False)
        assert root.is_relative_to(tmp_path / "envcache")
        data, _ = load("toyset-test", progress=False)
        assert len(data[0]) == 8 and set(data.splits) == {"train", "valid"}
    finally:
        registry_module.unregister("toyset-test")
    assert "toyset-test" not in registry_module.default_registry
    assert os.environ.get("HOTSTART_DATA_DIR") == str(tmp_path / "envcache")


def test_fetch_bad_checksum_extracts_nothing(server, tmp_path):
    www, url = server
    _image_archive(www)
    reg = Registry()
    reg.register("toyset", lambda root: None, url=url + "toyset.tgz", sha256="1" * 64, folder="toyset")
    with pytest.raises(ChecksumError):
        reg.fetch("toyset", cache_dir=tmp_path / "cache", progress=False)
    assert _files(tmp_path / "cache") == [] and not (tmp_path / "cache" / "toyset").exists()


def test_remote_layout_loaders(tmp_path):
    from hotstart.datasets.remote import mnist_png, oxford_pets, pets_label

    assert pets_label("Abyssinian_12.jpg") == "Abyssinian"
    assert pets_label("great_pyrenees_3.jpg") == "great_pyrenees"
    pets = tmp_path / "oxford-iiit-pet" / "images"
    pets.mkdir(parents=True)
    for name in ("Bengal_1.jpg", "Bengal_2.jpg", "great_pyrenees_1.jpg"):
        (pets / name).write_bytes(_png_bytes((1, 2, 3)))  # PIL identifies by content, not name
    (pets / "Bengal_1.mat").write_bytes(b"ignored")
    data, (_, label) = oxford_pets(pets.parent)
    assert label.classes == ["Bengal", "great_pyrenees"] and list(data.targets) == ["Bengal", "Bengal", "great_pyrenees"]
    mn = tmp_path / "mnist_png"
    for split in ("training", "testing"):
        (mn / split / "7").mkdir(parents=True)
        (mn / split / "7" / "1.png").write_bytes(_png_bytes((0, 0, 0)))
    data, _ = mnist_png(mn)
    assert data.splits == {"train": [0], "valid": [1]}


_DOWNLOAD_INTO_CACHE = """
import sys
from hotstart.cache_writes import CacheWriteError
from hotstart.datasets.download import download
try:
    download(sys.argv[1], None, progress=False)
except CacheWriteError as e:
    import os
    print(e)
    print(sorted(f for _, _, files in os.walk(os.environ["HOTSTART_DATA_DIR"]) for f in files))
    sys.exit(3)
"""


@pytest.mark.parametrize("fault", ["read_only", "full"])
def test_a_read_only_or_full_datasets_cache_names_its_folder_and_variable(tmp_path, fault):
    """A full disk gave "[Errno 28] No space left on device" without a path, a read-only folder a bare
    PermissionError. For root too: a read-only bind mount or a tiny tmpfs (tests/mount_namespace.py)."""
    import sys

    from mount_namespace import env_with_this_hotstart, run_in_mount_namespace

    source = tmp_path / "big.bin"
    source.write_bytes(os.urandom(256 * 1024))  # larger than the 64 KiB disk
    cache = tmp_path / "cache"
    cache.mkdir()
    proc = run_in_mount_namespace([sys.executable, "-c", _DOWNLOAD_INTO_CACHE, source.as_uri()],
                                  **{fault: [cache]}, env=env_with_this_hotstart(HOTSTART_DATA_DIR=str(cache)))
    assert proc.returncode == 3, proc.stdout + proc.stderr[-2000:]
    said, left = proc.stdout.splitlines()
    assert left == "[]"  # no half-written file left in the cache
    why = "the file system is read-only" if fault == "read_only" else "the disk is full"
    assert said.startswith(f"cannot write the datasets cache in {cache}") and why in said, said
    assert f"set HOTSTART_DATA_DIR to another folder (now HOTSTART_DATA_DIR={cache})" in said, said
