"""The V8 coverage of one script from several processes, merged as c8 merges it (@bcoe/v8-coverage 1.0's
``mergeScriptCovs``): each function's ranges, matched by their root range, become one tree whose counts are the
processes' sums, normalized (adjacent siblings of one count joined, a child spanning its parent folded in).

A port, not a dependency: the Node image carries no npm package of mendflow's own (``v8.py`` says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Range = tuple[int, int, int]  # start offset, end offset, count


@dataclass
class Function:
    name: str
    ranges: list[Range]  # pre-order: by start, then the wider first
    is_block: bool


@dataclass
class _Tree:
    """A range and its nested ranges, each count kept as the difference from its parent's (``delta``)."""

    start: int
    end: int
    delta: int
    children: list[_Tree] = field(default_factory=list)

    @classmethod
    def from_sorted(cls, ranges: list[Range]) -> _Tree:
        root = cls(*ranges[0])
        stack: list[tuple[_Tree, int]] = [(root, ranges[0][2])]
        for start, end, count in ranges[1:]:
            node = cls(start, end, count)
            while len(stack) > 1 and start >= stack[-1][0].end:
                stack.pop()
            parent, parent_count = stack[-1]
            node.delta -= parent_count
            parent.children.append(node)
            stack.append((node, count))
        return root

    def normalize(self) -> None:
        children: list[_Tree] = []
        chain: list[_Tree] = []
        for child in self.children:
            if chain and child.delta == chain[0].delta and child.start == chain[-1].end:
                chain.append(child)
                continue
            if chain:
                children.append(_joined(chain))
            chain = [child]
        if chain:
            children.append(_joined(chain))
        if len(children) == 1 and (children[0].start, children[0].end) == (self.start, self.end):
            self.delta += children[0].delta
            self.children = children[0].children
            return
        self.children = children

    def split(self, value: int) -> _Tree:
        """This tree cut at ``value`` (inside it): it keeps the left part and returns the right one."""
        left, middle = len(self.children), None
        for i, child in enumerate(self.children):
            if child.start < value < child.end:
                middle, left = child.split(value), i + 1
                break
            if child.start >= value:
                left = i
                break
        right = self.children[left:]
        del self.children[left:]
        right = [middle, *right] if middle is not None else right
        tail = _Tree(value, self.end, self.delta, right)
        self.end = value
        return tail

    def ranges(self, parent_count: int = 0) -> list[Range]:
        count = parent_count + self.delta
        out = [(self.start, self.end, count)]
        for child in self.children:
            out += child.ranges(count)
        return out


def _joined(chain: list[_Tree]) -> _Tree:
    """Adjacent siblings of one count as one tree, its children theirs, normalized."""
    head = chain[0]
    if len(chain) > 1:
        head.end = chain[-1].end
        for tail in chain[1:]:
            for sub in tail.children:
                sub.delta += tail.delta - head.delta
                head.children.append(sub)
    head.normalize()
    return head


def merged_functions(scripts: list[dict[str, Any]]) -> list[Function]:
    """The functions of one script's coverage from each process that ran it, merged, in pre-order."""
    by_root: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for script in scripts:
        for function in script.get("functions", []):
            if not function.get("ranges"):
                continue
            root = (function["ranges"][0]["startOffset"], function["ranges"][0]["endOffset"])
            found = by_root.get(root)
            if found is None or (not found[0].get("isBlockCoverage") and function.get("isBlockCoverage")):
                by_root[root] = found = []
            elif found[0].get("isBlockCoverage") and not function.get("isBlockCoverage"):
                continue  # a block-level coverage of it is at hand: function-level adds nothing
            found.append(function)
    merged = [_merged(functions) for functions in by_root.values()]
    return sorted(merged, key=lambda f: (f.ranges[0][0], -f.ranges[0][1]))


def _merged(functions: list[dict[str, Any]]) -> Function:
    tree = _merge_trees([_Tree.from_sorted(_sorted_ranges(f)) for f in functions])
    tree.normalize()
    ranges, name = tree.ranges(), functions[0].get("functionName") or ""
    if len(functions) == 1:  # normalized, at the granularity V8 gave it
        return Function(name, ranges, bool(functions[0].get("isBlockCoverage")))
    return Function(name, ranges, not (len(ranges) == 1 and ranges[0][2] == 0))


def _sorted_ranges(function: dict[str, Any]) -> list[Range]:
    ranges = [(int(r["startOffset"]), int(r["endOffset"]), int(r["count"])) for r in function["ranges"]]
    return sorted(ranges, key=lambda r: (r[0], -r[1]))


def _merge_trees(trees: list[_Tree]) -> _Tree:
    """Trees of one span as one, their counts summed (same start and end for all)."""
    if len(trees) == 1:
        return trees[0]
    return _Tree(trees[0].start, trees[0].end, sum(t.delta for t in trees), _merge_children(trees))


class _StartEvents:
    """The children of several parents, by start offset, with the right parts of those cut at a merged range's
    end put back in their place."""

    def __init__(self, parents: list[_Tree]) -> None:
        starts: dict[int, list[tuple[int, _Tree]]] = {}
        for index, parent in enumerate(parents):
            for child in parent.children:
                starts.setdefault(child.start, []).append((index, child))
        self.queue = sorted(starts.items())
        self.index = 0
        self.pending_offset = 0
        self.pending: list[tuple[int, _Tree]] | None = None

    def push_pending(self, index: int, tree: _Tree) -> None:
        """The right part of a tree cut at the open range's end, to start where that range ends."""
        self.pending = self.pending or []
        self.pending.append((index, tree))

    def next(self) -> tuple[int, list[tuple[int, _Tree]]] | None:
        event = self.queue[self.index] if self.index < len(self.queue) else None
        if self.pending is not None and (event is None or self.pending_offset < event[0]):
            pending, self.pending = self.pending, None
            return self.pending_offset, pending
        if self.pending is not None and event is not None and self.pending_offset == event[0]:
            event[1].extend(self.pending)
            self.pending = None
        self.index += 1
        return event


def _merge_children(parents: list[_Tree]) -> list[_Tree]:
    result: list[_Tree] = []
    events = _StartEvents(parents)
    nested: dict[int, list[_Tree]] = {}
    open_range: tuple[int, int] | None = None
    while (event := events.next()) is not None:
        offset, trees = event
        if open_range is not None and open_range[1] <= offset:
            result.append(_next_child(open_range, nested))
            open_range = None
        if open_range is None:
            end = max([offset + 1, *(tree.end for _, tree in trees)])
            for index, tree in trees:
                nested.setdefault(index, []).append(tree)
            events.pending_offset = end
            open_range = (offset, end)
            continue
        for index, tree in trees:
            if tree.end > open_range[1]:
                right = tree.split(open_range[1])
                events.push_pending(index, right)
            nested.setdefault(index, []).append(tree)
    if open_range is not None:
        result.append(_next_child(open_range, nested))
    return result


def _next_child(open_range: tuple[int, int], nested: dict[int, list[_Tree]]) -> _Tree:
    start, end = open_range
    matching = [
        trees[0] if len(trees) == 1 and (trees[0].start, trees[0].end) == open_range else _Tree(start, end, 0, trees)
        for trees in nested.values()
    ]
    nested.clear()
    return _merge_trees(matching)
