"""hotstart/file_digest.py: one way to hash a file, the same digest with and without
``hashlib.file_digest`` (Python 3.11+; the chunked loop is Python 3.10's)."""
import hashlib

import pytest

import hotstart.file_digest as fd


@pytest.mark.parametrize("size", [0, 5, (1 << 20) + 3])
@pytest.mark.parametrize("native", [True, False])
def test_the_digest_is_hashlibs_with_or_without_file_digest(tmp_path, monkeypatch, size, native):
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    if not native:
        monkeypatch.delattr(hashlib, "file_digest", raising=False)
    assert fd.file_sha256(path) == fd.file_sha256(str(path)) == hashlib.sha256(data).hexdigest()


def test_a_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        fd.file_sha256(tmp_path / "absent")
    assert info.value.filename == str(tmp_path / "absent")
