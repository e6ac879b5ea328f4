"""The folders are the pipeline's phases and import in one direction only; the house rules that keep it so are checked here."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"
ROOT = PACKAGE.parent

# The phases in the order data flows through them; a module may import its own phase or an earlier one.
# audit (`sitegen verify`) reads a publication back through the assembled phases, so it comes after them.
PHASES = ("core", "load", "score", "changelog", "render", "publish", "assembly", "audit", "cli")
# the top-level modules: build.py assembles the phases once (loading.py its first, which every command shares); check,
# serve and seal use its phase functions; cli prints
TOP = {"build": "assembly", "loading": "assembly", "checks": "assembly", "serving": "assembly", "sealing": "assembly", "cli": "cli", "__main__": "cli", "__init__": "core"}
RANK = {phase: rank for rank, phase in enumerate(PHASES)}
LINE_LIMIT = 400
GC_POLICY = "sitegen.core.collector"  # the one module that touches the cycle collector
WORKERS = "sitegen.core.workers"  # the one module that starts processes
MEMORY_POLICY = "sitegen.core.memory"  # the one module that tunes the C allocator


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def phase_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 2:
        return TOP.get(parts[1])
    return parts[1] if parts[1] in RANK else None


def tree_of(module: str) -> ast.Module:
    path = MODULES[module]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path.relative_to(ROOT)))


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def imported(module: str) -> list[tuple[str, int]]:
    """Every sitegen module (or name of the package) this one imports, absolute, with the line."""
    found = []
    for node in ast.walk(tree_of(module)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                found.append(("<relative import>", node.lineno))
            elif node.module and node.module.split(".")[0] == "sitegen":
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    found.append((candidate if candidate in MODULES else node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "sitegen")
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
    unplaced = [module for module in MODULES if phase_of(module) is None]
    assert not unplaced, f"place these modules in a phase folder ({', '.join(PHASES[:6])}) or name them in TOP: {unplaced}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_phase_imports_a_later_one(module):
    mine = phase_of(module)
    if mine is None:
        pytest.skip("not placed in a phase (reported by test_every_module_belongs_to_a_phase)")
    later = []
    for name, line in imported(module):
        if name in ("sitegen", "<relative import>") or name not in MODULES:
            continue  # the package's own names (__version__), and what the next tests report
        theirs = phase_of(name)
        if theirs is not None and RANK[theirs] > RANK[mine]:
            later.append(f"{where(module, line)}: the {mine} phase imports {name} (the {theirs} phase)")
    assert not later, "\n".join(later)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_are_absolute_and_name_modules_that_exist(module):
    exported = {"sitegen"}  # `from sitegen import __version__`
    wrong = [f"{where(module, line)}: {name}" for name, line in imported(module) if name not in MODULES and name not in exported]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_stand_at_the_top(module):
    """One style: a module's imports are read at its head, so its place in the house is seen at a glance."""
    tree = tree_of(module)
    allowed = _command_handlers(tree) if phase_of(module) == "cli" else set()
    nested = [where(module, node.lineno) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
              and node not in tree.body and not _type_checking_only(tree, node)
              and not any(node in list(ast.walk(f)) for f in allowed)]
    assert not nested, "imports inside functions or blocks:\n" + "\n".join(nested)


def _command_handlers(tree: ast.Module) -> set[ast.FunctionDef]:
    """The command line's handlers (`set_defaults(handler=...)`), the one exception: a command imports the phases it runs
    when it runs, so one that does not render does not pay for the renderer (tests/test_cli.py checks which it loads)."""
    named = {kw.value.id for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
             if kw.arg == "handler" and isinstance(kw.value, ast.Name)}
    return {f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name in named}


def _type_checking_only(tree: ast.Module, node) -> bool:
    for block in tree.body:
        if isinstance(block, ast.If) and _dotted(block.test).endswith("TYPE_CHECKING") and node in list(ast.walk(block)):
            return True
    return False


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_limit(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= LINE_LIMIT, f"{MODULES[module].relative_to(ROOT)} has {lines} lines (limit {LINE_LIMIT}): split it by concern"


TERMINAL = {"print", "exit", "quit", "sys.exit", "os._exit", "raise SystemExit", "sys.stdout.write", "sys.stderr.write",
            "sys.stdout.buffer.write", "input"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if phase_of(m) != "cli"))
def test_only_the_command_line_prints_or_exits(module):
    offending = [f"{where(module, node.lineno)}: {name}" for node, name in calls(module) if name in TERMINAL]
    assert not offending, "\n".join(offending)


def test_the_command_line_does_print_and_exit():
    names = {name for _, name in calls("sitegen.cli")}
    assert "print" in names and "sys.exit" in names, "the checker above would miss a renamed call"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_sets_the_process_locale(module):
    tree = tree_of(module)
    offending = [node.lineno for node, name in calls(module) if name.endswith("setlocale")]
    offending += [node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module == "locale" and any(a.name == "setlocale" for a in node.names)]
    assert not offending, f"{MODULES[module].relative_to(ROOT)} calls setlocale at line(s) {offending}; pass the locale to Babel"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_says_why_it_exists(module):
    docstring = ast.get_docstring(tree_of(module))
    assert docstring and docstring.strip(), f"{MODULES[module].relative_to(ROOT)} has no module docstring"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != GC_POLICY))
def test_only_the_policy_module_touches_the_cycle_collector(module):
    tree = tree_of(module)
    offending = [where(module, node.lineno) for node in ast.walk(tree)
                 if isinstance(node, ast.Import) and any(a.name == "gc" for a in node.names)
                 or isinstance(node, ast.ImportFrom) and node.module == "gc"]
    assert not offending, "the cycle collector is the caller's policy (sitegen/core/collector.py):\n" + "\n".join(offending)


# sitegen.audit.checklist assembles `sitegen verify` from the build's phases, as sitegen.checks does `sitegen check`
POLICY_USERS = {"sitegen.build", "sitegen.loading", "sitegen.checks", "sitegen.cli", "sitegen.serving", "sitegen.audit.checklist", GC_POLICY}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m not in POLICY_USERS))
def test_library_functions_leave_the_collector_to_their_caller(module):
    uses = [f"{where(module, line)}: {name}" for name, line in imported(module) if name == GC_POLICY]
    assert not uses, "only the assembly (build, check, the command line) decides the collector's policy:\n" + "\n".join(uses)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != MEMORY_POLICY))
def test_only_the_memory_policy_tunes_the_allocator(module):
    tree = tree_of(module)
    offending = [where(module, node.lineno) for node in ast.walk(tree)
                 if isinstance(node, ast.Attribute) and node.attr in ("mallopt", "malloc_trim")]
    assert not offending, "the process's memory policy is sitegen/core/memory.py's alone:\n" + "\n".join(offending)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != WORKERS))
def test_one_worker_mechanism(module):
    tree = tree_of(module)
    offending = [where(module, node.lineno) for node in ast.walk(tree)
                 if isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("multiprocessing", "concurrent") for a in node.names)
                 or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("multiprocessing", "concurrent")]
    assert not offending, "processes are started by sitegen/core/workers.py alone:\n" + "\n".join(offending)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_cache_keyed_on_object_identity(module):
    """A cache belongs to the object that owns the data; id() of an object handed across modules is no key."""
    offending = [where(module, node.lineno) for node, name in calls(module) if name == "id"]
    assert not offending, "\n".join(offending)


MUTATORS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "add", "discard", "remove"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_level_mutable_state(module):
    """Nothing a module holds at its top level is changed after import: no global statement, no container filled later."""
    tree = tree_of(module)
    top_names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        top_names.update(t.id for t in targets if isinstance(t, ast.Name))
    offending = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            offending.append(f"{where(module, node.lineno)}: global {', '.join(node.names)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id in top_names and _inside_function(tree, node):
                offending.append(f"{where(module, node.lineno)}: {owner.id}.{node.func.attr}()")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in top_names \
                        and _inside_function(tree, node):
                    offending.append(f"{where(module, node.lineno)}: {target.value.id}[...] =")
    assert not offending, "module-level state changed after import:\n" + "\n".join(offending)


def _inside_function(tree: ast.Module, target) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(child is target for child in ast.walk(node)):
            return True
    return False


def test_the_readmes_layout_names_every_folder_and_module():
    """The README's layout section is how a newcomer finds their way: it must match the tree."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = text[text.index("sitegen/          the package"):]
    layout = layout[: layout.index("```")]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        folder = path.parent.relative_to(PACKAGE).as_posix()
        if folder != "." and f"{folder.split('/')[-1]}/" not in layout:
            missing.append(folder + "/")
        one_per_measure = folder == "score/measures" and path.name not in ("base.py", "registry.py")  # named as "one module per measure"
        if path.name not in layout and not one_per_measure:
            missing.append(path.relative_to(PACKAGE).as_posix())
    assert "one module per measure" in layout
    assert not missing, f"the README's layout does not name: {sorted(set(missing))}"
