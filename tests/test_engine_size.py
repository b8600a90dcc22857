"""The engine stays small enough to read (SPEC: "readable engine").

``minichain/backprop.py`` at most 330 lines of code (Chainer's ``_backprop``
and ``_backprop_utils`` together: 329), and the core (variable,
function_node, function, backprop and its undo log, configuration) under
1 566. Lines of code are lines that are neither blank, comments nor
docstrings, counted as ``shared/tools/sloc.py`` counts them. The reference
path lives in these files too (docs/engine-paths.md): it has to fit.
"""

import ast
import io
import pathlib
import tokenize

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "minichain"
CORE = ("variable.py", "function_node.py", "function.py", "backprop.py",
        "backward_undo.py", "configuration.py")


def code_lines(path):
    source = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER)
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(line for line in range(token.start[0], token.end[0] + 1)
                         if line not in docstrings)
    return len(lines)


def test_backprop_is_at_most_330_lines_of_code():
    assert code_lines(PACKAGE / "backprop.py") <= 330


def test_the_core_is_under_1566_lines_of_code():
    assert sum(code_lines(PACKAGE / name) for name in CORE) < 1566


def test_the_counter_skips_docstrings_comments_and_blank_lines(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Doc\nstring."""\n\n# a comment\nx = 1  # trailing\n'
                      'def f():\n    """Doc."""\n    return (1,\n            2)\n')
    assert code_lines(sample) == 4
