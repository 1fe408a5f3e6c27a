from __future__ import annotations

from pathlib import Path

from mendflow_java.javac import compile_errors

# What maven-compiler-plugin 3.14.1 printed for a real compile error in examples/java-isbn (copied to /tmp/jx).
OUTPUT = """\
[ERROR] COMPILATION ERROR :
[INFO] -------------------------------------------------------------
[ERROR] /tmp/jx/src/main/java/org/example/isbn/Isbn.java:[103,12] cannot find symbol
  symbol:   variable digits2
  location: class org.example.isbn.Isbn
[ERROR] /tmp/jx/src/main/java/org/example/isbn/Isbn.java:[118,12] cannot find symbol
  symbol:   variable digits2
  location: class org.example.isbn.Isbn
[INFO] 2 errors
[ERROR] /tmp/jx/src/main/java/org/example/isbn/Isbn.java:[103,12] cannot find symbol
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.14.1:compile (default-compile)
"""


def test_compile_errors_are_file_line_col_message_relative_to_the_root() -> None:
    assert compile_errors(OUTPUT, Path("/tmp/jx")) == [
        "src/main/java/org/example/isbn/Isbn.java:103:12 cannot find symbol (variable digits2)",
        "src/main/java/org/example/isbn/Isbn.java:118:12 cannot find symbol (variable digits2)",
    ]


def test_a_path_outside_the_root_is_kept_whole() -> None:
    assert compile_errors("[ERROR] /elsewhere/A.java:[1,2] oops\n", Path("/tmp/jx")) == ["/elsewhere/A.java:1:2 oops"]
