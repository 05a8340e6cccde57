"""Convolutions under fmtcheck.torch.emulate (im2col GEMMs through the recipe's layer GEMM) against
torch's own convolution in float64 on integer data: the forward is bf16(conv + bias), the GEMM exact
and the one rounding the recipe's to bf16 (torch's cast); the weight and bias gradients are one
GEMM or sum each, bf16(torch's); the input gradient sums bf16 GEMM results that are exact here, so
it is torch's (dy in {-1, 0, 1}, weights below 21). Stride, padding, dilation, groups, unbatched
input and the transposed forms; the casts' names under modules."""

import pytest
import torch

import fmtcheck.torch as ft
from exact_data import bf16, grads, ints

F = torch.nn.functional

CASES = {  # op, input shape, weight shape, keywords
    "conv1d": (F.conv1d, (2, 3, 9), (4, 3, 3), dict(stride=2, padding=1)),
    "conv2d": (F.conv2d, (2, 3, 6, 5), (4, 3, 3, 2), dict(padding=(1, 0), dilation=(2, 1))),
    "conv2d groups": (F.conv2d, (1, 4, 5, 5), (6, 2, 2, 2), dict(stride=(2, 1), groups=2)),
    "conv2d same": (F.conv2d, (1, 2, 5, 4), (3, 2, 2, 3), dict(padding="same", dilation=2)),
    "conv2d unbatched": (F.conv2d, (2, 4, 4), (3, 2, 3, 3), dict(padding=1)),
    "conv3d": (F.conv3d, (1, 2, 4, 3, 4), (3, 2, 2, 2, 3), dict(stride=(1, 2, 1), padding=(0, 1, 1))),
    "conv_transpose1d": (F.conv_transpose1d, (2, 3, 5), (3, 2, 3), dict(stride=2, padding=1, output_padding=1)),
    "conv_transpose2d": (F.conv_transpose2d, (1, 4, 3, 4), (4, 3, 2, 3),
                         dict(stride=(2, 1), padding=(0, 2), groups=2, dilation=(1, 2))),
}


@pytest.mark.parametrize("case", CASES)
def test_conv_forward_and_backward_against_torch(case):
    op, xs, ws, kw = CASES[case]
    x, w = ints(*xs, seed=1, hi=20), ints(*ws, seed=2, hi=20)  # sums past 256: bf16 rounds them
    out_channels = ws[1] * kw.get("groups", 1) if "transpose" in case else ws[0]
    b = ints(out_channels, seed=3)
    with ft.emulate("bf16", "hopper"):
        y = op(x, w, b, **kw)
    dy = ints(*y.shape, seed=4, hi=1)  # integers: the same in bf16
    want, (gx, gw, gb) = grads(lambda *t: op(*t, **kw), (x, w, b), dy)
    y.backward(dy)
    assert y.shape == want.shape and torch.equal(y, bf16(want)), case
    assert torch.equal(x.grad, gx)
    assert torch.equal(w.grad, bf16(gw)) and torch.equal(b.grad, bf16(gb))
    assert bf16(want).ne(want).any()  # the rounding to bf16 is exercised


def test_conv_module_is_named_by_its_path():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, groups=2), torch.nn.ReLU(), torch.nn.Conv2d(4, 3, 1))
    with ft.emulate("fp8-current", "hopper", model=model) as em:
        model(torch.randn(2, 2, 5, 5)).sum().backward()
    s = em.summary
    assert {"0.group0:input", "0.group1:weight", "2:input", "2:grad_weight", "2:grad_input"} <= set(s)
    assert s["2:input"]["values"] == 2 * 3 * 3 * 4  # one row per output position, C_in x 1 x 1 each


def test_conv_channels_that_do_not_divide_are_one_error():
    with ft.emulate("bf16"), pytest.raises(ft.Error, match="conv2d of input .* in 2 groups") as e:
        F.conv2d(torch.ones(1, 3, 4, 4), torch.ones(2, 1, 2, 2), groups=2)
    assert "\n" not in str(e.value)
