"""The benchmark suite: the 12 layers of issue 4, one frozen dataclass per row."""
from __future__ import annotations

from dataclasses import dataclass, replace

Triple = tuple[int, int, int]


def _t(v) -> Triple:
    return (v, v, v) if isinstance(v, int) else tuple(v)  # type: ignore[return-value]


@dataclass(frozen=True)
class Case:
    """One layer: x is (N, Cin, D, H, W); weight is (Cin, Cout/groups, kD, kH, kW)."""

    id: int
    N: int
    Cin: int
    Cout: int
    size: Triple          # input D, H, W
    kernel: Triple
    stride: Triple
    padding: Triple
    output_padding: Triple
    groups: int
    dilation: Triple
    bias: bool

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.N, self.Cin, *self.size)

    @property
    def weight_shape(self) -> tuple[int, ...]:
        return (self.Cin, self.Cout // self.groups, *self.kernel)

    @property
    def out_size(self) -> Triple:
        return tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1  # type: ignore[return-value]
                     for i, k, s, p, op, d in zip(self.size, self.kernel, self.stride, self.padding,
                                                   self.output_padding, self.dilation))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.N, self.Cout, *self.out_size)

    def conv_args(self) -> dict:
        """Keyword arguments of F.conv_transpose3d (and inductor_convt3d.conv_transpose3d)."""
        return dict(stride=self.stride, padding=self.padding, output_padding=self.output_padding,
                    groups=self.groups, dilation=self.dilation)

    def shrunk(self, factor: int) -> "Case":
        """The same layer with every input spatial size divided by `factor` (at least 1).
        Only for the tests' quick CPU runs (`--shrink`); channels and geometry are kept."""
        if factor <= 1:
            return self
        return replace(self, size=tuple(max(1, -(-s // factor)) for s in self.size))

    def describe(self) -> str:
        def fmt(t: Triple) -> str:
            return str(t[0]) if len(set(t)) == 1 else "(" + ",".join(map(str, t)) + ")"
        d, h, w = self.size
        return (f"N={self.N} Cin={self.Cin} Cout={self.Cout} in={d}x{h}x{w} k={fmt(self.kernel)} "
                f"s={fmt(self.stride)} p={fmt(self.padding)} op={fmt(self.output_padding)} "
                f"g={self.groups} d={fmt(self.dilation)} bias={'yes' if self.bias else 'no'}")


def _case(id, N, Cin, Cout, size, kernel, stride, padding, output_padding, groups, dilation, bias):
    return Case(id, N, Cin, Cout, _t(size), _t(kernel), _t(stride), _t(padding),
                _t(output_padding), groups, _t(dilation), bias)


# Columns as in the issue: N, Cin, Cout, input DxHxW, kernel, stride, padding, output_padding,
# groups, dilation, bias.
CASES: tuple[Case, ...] = (
    _case(1, 16, 32, 16, (16, 32, 64), (3, 5, 7), 1, 0, 0, 1, 1, False),
    _case(2, 8, 48, 48, 64, 3, 1, 0, 0, 1, 1, False),
    _case(3, 16, 32, 64, 64, (3, 5, 5), 1, 0, 0, 1, 1, False),
    _case(4, 8, 48, 24, 96, 3, 1, 0, 0, 1, 1, False),
    _case(5, 8, 32, 32, (12, 24, 48), (3, 5, 7), 2, (1, 2, 3), 1, 4, 1, False),
    _case(6, 4, 32, 32, (32, 64, 128), 3, 2, 1, 0, 1, 1, False),
    _case(7, 4, 32, 32, (32, 64, 128), 3, 2, 1, 0, 4, 1, False),
    _case(8, 16, 32, 64, (16, 32, 32), 3, 2, 1, 0, 1, 2, True),
    _case(9, 2, 256, 128, 16, 2, 2, 0, 0, 1, 1, True),
    _case(10, 2, 64, 32, 64, 2, 2, 0, 0, 1, 1, True),
    _case(11, 16, 128, 64, 16, 4, 2, 1, 0, 1, 1, False),
    _case(12, 4, 128, 64, 32, 3, 2, 1, 1, 1, 1, True),
)

CASE_IDS: tuple[int, ...] = tuple(c.id for c in CASES)


def get_cases(ids=None) -> list[Case]:
    if ids is None:
        return list(CASES)
    by_id = {c.id: c for c in CASES}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise ValueError(f"unknown case(s) {unknown}; the suite has cases {list(CASE_IDS)}")
    return [by_id[i] for i in ids]
