"""The pipeline's phases import in one direction only, only the command line talks to the terminal, and nobody sets the locale."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))

# The phases in the order data flows through them; a module may import its own phase or an earlier one.
PHASES = (
    ("load", {"__init__", "records", "jsonread", "schema", "text", "model", "errors", "entries", "spool", "workers", "collector", "invisibles"}),
    ("match", {"matching"}),
    ("measure", {"measures"}),
    ("score", {"scoring"}),
    # the results record, and the read-only questions asked of scored runs (compare, explain, release-check)
    ("results", {"results", "comparison", "explanation", "release", "publication"}),
    ("changelog", {"changelog", "markup"}),
    ("render", {"pages", "templating", "feed", "formatting", "catalogs"}),
    ("write", {"site", "swap"}),
    ("build", {"build", "checks", "serving"}),
    ("cli", {"cli", "__main__"}),
)
RANK = {module: rank for rank, (_, members) in enumerate(PHASES) for module in members}
PHASE_NAME = {module: PHASES[rank][0] for module, rank in RANK.items()}


def tree_of(module: str) -> ast.Module:
    return ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"), filename=f"sitegen/{module}.py")


def imported(module: str) -> list[tuple[str, int]]:
    """Every sitegen module this one imports, at module level or inside a function, with the line."""
    found = []
    for node in ast.walk(tree_of(module)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and node.module and node.module.split(".")[0] == "sitegen"):
                parts = (node.module or "").split(".")
                if node.level == 0:
                    parts = parts[1:]
                if parts and parts[0]:
                    found.append((parts[0], node.lineno))
                else:  # `from . import model` or `from sitegen import model`
                    found.extend((alias.name, node.lineno) for alias in node.names)
            elif node.level > 1:
                found.append(("<outside the package>", node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "sitegen" and len(parts) > 1:
                    found.append((parts[1], node.lineno))
    return found


def calls(module: str):
    for node in ast.walk(tree_of(module)):
        if isinstance(node, ast.Call):
            yield node, _dotted(node.func)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if _dotted(target) == "SystemExit":
                yield node, "raise SystemExit"


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def test_every_module_belongs_to_a_phase():
    unplaced = [module for module in MODULES if module not in RANK]
    assert not unplaced, f"place these modules in a phase: {unplaced}"


@pytest.mark.parametrize("module", MODULES)
def test_no_phase_imports_a_later_one(module):
    if module not in RANK:
        pytest.skip("not placed in a phase (reported by test_every_module_belongs_to_a_phase)")
    later = []
    for name, line in imported(module):
        if name in ("__version__",):
            continue
        if name not in RANK:
            continue  # reported by the next test
        if RANK[name] > RANK[module]:
            later.append(f"sitegen/{module}.py:{line}: {PHASE_NAME[module]} phase imports {name} ({PHASE_NAME[name]} phase)")
    assert not later, "\n".join(later)


@pytest.mark.parametrize("module", MODULES)
def test_every_import_of_the_package_names_a_module_that_exists(module):
    exported = {"__version__"}
    dangling = [f"sitegen/{module}.py:{line}: {name}" for name, line in imported(module) if name not in MODULES and name not in exported]
    assert not dangling, "\n".join(dangling)


TERMINAL = {"print", "exit", "quit", "sys.exit", "os._exit", "raise SystemExit", "sys.stdout.write", "sys.stderr.write",
            "sys.stdout.buffer.write", "input"}


@pytest.mark.parametrize("module", [m for m in MODULES if m not in ("cli", "__main__")])
def test_only_the_command_line_prints_or_exits(module):
    offending = [f"sitegen/{module}.py:{node.lineno}: {name}" for node, name in calls(module) if name in TERMINAL]
    assert not offending, "\n".join(offending)


def test_the_command_line_does_print_and_exit():
    names = {name for _, name in calls("cli")}
    assert "print" in names and "sys.exit" in names, "the checker above would miss a renamed call"


@pytest.mark.parametrize("module", MODULES)
def test_no_module_sets_the_process_locale(module):
    tree = tree_of(module)
    offending = [node.lineno for node, name in calls(module) if name.endswith("setlocale")]
    offending += [node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module == "locale" and any(a.name == "setlocale" for a in node.names)]
    assert not offending, f"sitegen/{module}.py calls setlocale at line(s) {offending}; pass the locale to Babel instead"


@pytest.mark.parametrize("module", MODULES)
def test_every_module_says_why_it_exists(module):
    docstring = ast.get_docstring(tree_of(module))
    assert docstring and docstring.strip(), f"sitegen/{module}.py has no module docstring"
