import ast
import json
import os
from pathlib import Path

import pytest

from bufferlint.findings import FileError
from bufferlint.source import MAX_BYTES, SourceFile, parse_source, read_source


def test_reads_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("name = 'café'\n", encoding="utf-8")
    assert read_source(path) == SourceFile(path, "name = 'café'\n")


def test_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert read_source(path).text == "x = 1\n"


def test_coding_cookie_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes("# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1"))
    assert read_source(path).text == "# -*- coding: latin-1 -*-\nname = 'café'\n"


def test_latin1_without_cookie_names_encoding_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    data = "x = 1\nname = 'café'\n".encode("latin-1")
    path.write_bytes(data)
    error = read_source(path)
    assert isinstance(error, FileError) and error.path == path
    offset = data.index(b"\xe9")
    assert error.message.startswith(f"cannot decode as utf-8 at line 2 (byte offset {offset}: ")
    assert "PEP 263" in error.message


def test_non_utf8_in_the_lines_that_may_hold_a_cookie(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))
    assert read_source(path) == FileError(
        path,
        "cannot decode as utf-8 at line 1 (byte offset 5: invalid continuation byte); "
        "declare the encoding with a PEP 263 coding comment",
    )


def test_cookie_contradicting_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")
    assert read_source(path) == FileError(path, "bad encoding declaration: the coding comment contradicts the UTF-8 BOM")


def test_unknown_coding_cookie(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"# coding: klingon\nx = 1\n")
    assert read_source(path) == FileError(path, "bad encoding declaration: unknown encoding: klingon")


def test_nul_byte(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n\0\n")
    assert read_source(path) == FileError(path, "contains a NUL byte (binary file?)")


def test_too_large(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * (MAX_BYTES + 1))
    assert read_source(path) == FileError(
        path,
        "file too large to analyse (5.0 MiB; the limit is 5 MiB: raise it with --max-file-size or max-file-size in "
        "[tool.bufferlint])",
    )


def test_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * MAX_BYTES)
    assert isinstance(read_source(path), SourceFile)


def test_broken_symlink(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.symlink_to(tmp_path / "gone.py")
    assert read_source(path) == FileError(path, "cannot read file: No such file or directory")


def test_symlink_loop(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.symlink_to(path)
    assert read_source(path) == FileError(path, "cannot read file: Too many levels of symbolic links")


def test_directory(tmp_path: Path) -> None:
    path = tmp_path / "pkg.py"
    path.mkdir()
    assert read_source(path) == FileError(path, "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "pipe.py"
    os.mkfifo(path)
    assert read_source(path) == FileError(path, "not a regular file")


def test_parse_ok(tmp_path: Path) -> None:
    tree = parse_source(SourceFile(tmp_path / "a.py", "def f():\n    return 1\n"))
    assert isinstance(tree, ast.Module) and isinstance(tree.body[0], ast.FunctionDef)


def test_syntax_error_message(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    assert parse_source(SourceFile(path, "x = 1\ndef f(:\n    pass\n")) == FileError(
        path, "syntax error at line 2, column 7: invalid syntax"
    )


def test_indentation_error_is_a_syntax_error(tmp_path: Path) -> None:
    error = parse_source(SourceFile(tmp_path / "a.py", "def f():\nreturn 1\n"))
    assert isinstance(error, FileError)
    assert error.message.startswith("syntax error at line 2, column 1: expected an indented block")


@pytest.mark.parametrize("text", ["-" * 100_000 + "1\n", "a" + ".b" * 200_000 + "\n"])
def test_pathologically_nested_code(tmp_path: Path, text: str) -> None:
    path = tmp_path / "a.py"
    assert parse_source(SourceFile(path, text)) == FileError(path, "cannot parse: expression nested too deeply")


def test_the_size_limit_is_an_option(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "big.py").write_bytes(b"x = 1\n" + b"#" * (1024 * 1024))
    proc = run_cli("check", "--max-file-size", "0.5", "big.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "big.py: error: file too large to analyse (1.0 MiB; the limit is 0.5 MiB: raise it with --max-file-size" in proc.stdout
    assert run_cli("check", "--max-file-size", "2", "big.py", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.bufferlint]\nmax-file-size = 0.5\n")
    assert run_cli("check", "big.py", cwd=tmp_path).returncode == 2
    assert run_cli("check", "--max-file-size", "2", "big.py", cwd=tmp_path).returncode == 0  # the option wins
    proc = run_cli("check", "--max-file-size", "0", "big.py", cwd=tmp_path)
    assert proc.returncode == 2 and "--max-file-size: expected a positive number of MiB" in proc.stderr


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("def f():\n    x = 1\n    global x\n", "syntax error at line 3, column 5: name 'x' is assigned to before global declaration"),
        ("def f():\n    print(x)\n    global x\n", "syntax error at line 3, column 5: name 'x' is used prior to global declaration"),
        ("return 5\n", "syntax error at line 1, column 1: 'return' outside function"),
        ("nonlocal x\n", "syntax error at line 1, column 1: nonlocal declaration not allowed at module level"),
        ("import os\nfrom __future__ import annotations\n",
         "syntax error at line 2, column 1: from __future__ imports must occur at the beginning of the file"),
    ],
)
def test_what_cpython_does_not_compile_is_a_file_error(tmp_path: Path, code: str, message: str) -> None:
    """ast.parse accepts these; compile() does not. Each is the file's one-line error, exit 2."""
    from conftest import run_cli

    (tmp_path / "bad.py").write_text(code)
    (tmp_path / "good.py").write_text('x = "\\d"\n')  # a SyntaxWarning only: valid
    proc = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert json.loads(proc.stdout)["errors"] == [{"path": "bad.py", "message": message}]
    assert proc.stderr == "No findings in 2 files. 1 path could not be analysed.\n"


def test_a_cookie_line_that_is_not_utf8_is_read_as_cpython_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"# -*- coding: latin-1 -*- caf\xe9\nx = '\xe9'\n")
    assert read_source(path) == SourceFile(path, "# -*- coding: latin-1 -*- café\nx = 'é'\n")


def test_a_cookie_counts_on_cr_only_lines_one_and_two_only(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"#!/usr/bin/env python\r# coding: latin-1\rx = '\xe9'\r")
    assert read_source(path) == SourceFile(path, "#!/usr/bin/env python\r# coding: latin-1\rx = '\xe9'\r")
    path.write_bytes(b"x = 1\ry = 2\r# coding: latin-1\rz = '\xe9'\r")  # line 3: no cookie (as for CPython)
    assert read_source(path) == FileError(
        path, "cannot decode as utf-8 at line 4 (byte offset 35: invalid continuation byte); "
        "declare the encoding with a PEP 263 coding comment"
    )
