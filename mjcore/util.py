"""Generic list helpers shared by the interpreters (Autodidax's `split_list`, `unzip2`...)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def unzip2(pairs: Iterable[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
    """Split a sequence of pairs into two lists."""
    lst1, lst2 = [], []
    for x1, x2 in pairs:
        lst1.append(x1)
        lst2.append(x2)
    return lst1, lst2


def split_list(lst: Sequence[T], n: int) -> tuple[list[T], list[T]]:
    """Split `lst` into its first `n` elements and the rest."""
    assert 0 <= n <= len(lst), (n, len(lst))
    return list(lst[:n]), list(lst[n:])


def partition_list(bs: Sequence[bool], lst: Sequence[T]) -> tuple[list[T], list[T]]:
    """Split `lst` into the elements whose flag is False and those whose flag is True."""
    assert len(bs) == len(lst)
    false_lst: list[T] = []
    true_lst: list[T] = []
    for b, x in zip(bs, lst, strict=True):
        (true_lst if b else false_lst).append(x)
    return false_lst, true_lst


def merge_lists(bs: Sequence[bool], false_lst: Sequence[T], true_lst: Sequence[T]) -> list[T]:
    """Inverse of `partition_list`."""
    it_false, it_true = iter(false_lst), iter(true_lst)
    out = [next(it_true) if b else next(it_false) for b in bs]
    assert next(it_false, None) is None and next(it_true, None) is None
    return out


def safe_map(f: Callable[..., T], *args: Sequence[Any]) -> list[T]:
    """`map` that insists its arguments have equal lengths."""
    n = len(args[0])
    for arg in args[1:]:
        assert len(arg) == n, f"length mismatch: {list(map(len, args))}"
    return list(map(f, *args))


def prod(xs: Iterable[int]) -> int:
    """Product of integers (1 for an empty sequence)."""
    out = 1
    for x in xs:
        out *= x
    return out
