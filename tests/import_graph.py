"""The import graph of mjcore and mjnp, read from their sources (issue 19).

Edges come from every `import` statement, at module level and inside functions. `from P import
name` is an edge to the submodule `P.name` when that is a module, else to `P` itself.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mjcore", "mjnp")


@dataclass(frozen=True)
class LocalImport:
    """An import statement inside a function: `module` imports `target` at line `line`."""

    module: str
    target: str
    line: int


@dataclass
class ImportGraph:
    files: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)  # every import
    top_edges: dict[str, set[str]] = field(default_factory=dict)  # module-level imports only
    local_imports: list[LocalImport] = field(default_factory=list)

    def sccs(self, edges: dict[str, set[str]] | None = None) -> list[list[str]]:
        """Strongly connected components (Tarjan), largest first."""
        edges = self.edges if edges is None else edges
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        out: list[list[str]] = []

        def visit(v: str) -> None:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            for w in sorted(edges.get(v, ())):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))

        for v in sorted(self.files):
            if v not in index:
                visit(v)
        return sorted(out, key=len, reverse=True)

    def reaches(self, src: str, dst: str, edges: dict[str, set[str]]) -> bool:
        seen, todo = {src}, [src]
        while todo:
            v = todo.pop()
            if v == dst:
                return True
            for w in edges.get(v, ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return False

    def import_time_edges(self) -> dict[str, set[str]]:
        """Module-level edges plus the packages Python runs first: importing `a.b.c` from outside
        package `a.b` executes `a/b/__init__.py` too."""
        out: dict[str, set[str]] = {}
        for m, targets in self.top_edges.items():
            es = set(targets)
            for t in targets:
                parent = t.rpartition(".")[0]
                while parent and not (m == parent or m.startswith(parent + ".")):
                    if parent in self.files:
                        es.add(parent)
                    parent = parent.rpartition(".")[0]
            es.discard(m)
            out[m] = es
        return out

    def needless_local_imports(self) -> list[LocalImport]:
        """Function-local imports that break no cycle: the target does not import the module
        back (transitively, at import time), so the import could sit at module level."""
        edges = self.import_time_edges()
        return [li for li in self.local_imports if not self.reaches(li.target, li.module, edges)]


def _module_files() -> dict[str, Path]:
    files = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files[".".join(parts)] = path
    return files


def build() -> ImportGraph:
    files = _module_files()
    graph = ImportGraph(files)
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        graph.edges[mod], graph.top_edges[mod] = set(), set()
        _walk(graph, mod, is_pkg, tree, in_function=False)
    return graph


def _resolve(graph: ImportGraph, name: str) -> str | None:
    while name and name not in graph.files:
        name = name.rpartition(".")[0]
    return name or None


def _walk(graph: ImportGraph, mod: str, is_pkg: bool, node: ast.AST, in_function: bool) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            targets = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            else:
                base = child.module or ""
                if child.level:
                    parts = mod.split(".")[: None if is_pkg else -1]
                    parts = parts[: len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([child.module] if child.module else []))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in graph.files else base)
            for name in dict.fromkeys(targets):
                target = _resolve(graph, name)
                if target is None or target == mod:
                    continue
                graph.edges[mod].add(target)
                if in_function:
                    graph.local_imports.append(LocalImport(mod, target, child.lineno))
                else:
                    graph.top_edges[mod].add(target)
        else:
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            _walk(graph, mod, is_pkg, child, in_function or nested)
