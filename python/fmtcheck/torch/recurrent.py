"""torch's recurrent layers for fmtcheck.torch.emulate (nn.RNN, nn.LSTM, nn.GRU and their cells, which
call torch.rnn_tanh, lstm, gru, lstm_cell, ...): ATen's CPU path (aten/src/ATen/native/RNN.cpp) step
for step, each of its GEMMs the recipe's layer GEMM. Per layer and direction: the input's projection
for the whole sequence at once (named path.OP.ih_lL, "_reverse" for the second direction), then per
time step the hidden state's (path.OP.hh_lL, #1, #2, ...: one cast per step, as the hidden state is a
new tensor each step) and an LSTM's projection with proj_size (path.OP.hr_lL). The gates' sums,
sigmoid and tanh, the cell state and the dropout between layers are torch's own float32 ops in
ATen's order. Not what cuDNN's fused RNN kernels compute (they keep the gates in registers): what
ATen's composition computes with the preset's GEMMs. Packed sequences are Unsupported."""

from __future__ import annotations

import torch

from .arguments import in_order
from .errors import Error
from .unsupported import Unsupported


def _simple(nonlinearity):
    """RNN.cpp's SimpleCell: nonlinearity(linear_hh(h) + the input's projection)."""

    def cell(gemm, x_w, h, w_hh, b_hh, _w_hr):
        return nonlinearity(gemm("hh", h, w_hh, b_hh) + x_w)

    return cell


def _lstm(gemm, x_w, hidden, w_hh, b_hh, w_hr):
    """RNN.cpp's LSTMCell: gates i, f, g, o in that order along the last dimension."""
    hx, cx = hidden
    i, f, g, o = (gemm("hh", hx, w_hh, b_hh) + x_w).chunk(4, -1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    if w_hr is not None:  # matmul_hr: the projection, no bias
        hy = gemm("hr", hy, w_hr, None)
    return hy, cy


def _gru(gemm, x_w, h, w_hh, b_hh, _w_hr):
    """RNN.cpp's GRUCell: reset, update (input) and new gates; the new gate takes the reset hidden
    projection, h' = (h - n) * z + n."""
    ir, iz, i_n = x_w.chunk(3, -1)
    hr, hz, h_n = gemm("hh", h, w_hh, b_hh).chunk(3, -1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (i_n + h_n * r).tanh()
    return (h - n) * z + n


CELLS = {"lstm": _lstm, "gru": _gru, "rnn_tanh": _simple(torch.tanh), "rnn_relu": _simple(torch.relu)}


def _one_direction(gemm, kind, x, hidden, params, reverse):
    """FullLayer on the CPU: the input projected for every step in one GEMM, then the cell step by
    step (backwards for the reverse direction, its outputs put back in time order)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = params
    steps = gemm("ih", x, w_ih, b_ih).unbind(0)
    outputs = []
    for x_w in reversed(steps) if reverse else steps:
        hidden = CELLS[kind](gemm, x_w, hidden, w_hh, b_hh, w_hr)
        outputs.append(hidden[0] if kind == "lstm" else hidden)
    if reverse:
        outputs.reverse()
    return torch.stack(outputs, 0), hidden


def _layer_params(flat, has_biases, projections, count):
    """nn.RNNBase's flat weights, per layer and direction: w_ih, w_hh, [b_ih, b_hh], [w_hr]."""
    stride = 2 + 2 * has_biases + projections
    if len(flat) != stride * count:
        raise Error(f"{len(flat)} recurrent weights for {count} layer directions: expected {stride} each")
    out = []
    for i in range(count):
        p = flat[i * stride:(i + 1) * stride]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        out.append((p[0], p[1], b_ih, b_hh, p[-1] if projections else None))
    return out


ARGUMENTS = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional", "batch_first")


def sequence(em, kind, *args, **kwargs):
    """torch.lstm / gru / rnn_tanh / rnn_relu (input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first): the output and the final hidden states (and cell states)."""
    # The packed form is (data, batch_sizes, hx, params, ...): its second argument is a tensor for an
    # LSTM (its hx is a list), its third for the others (their params are a list).
    if "batch_sizes" in kwargs or isinstance((args + (None, None))[1 if kind == "lstm" else 2], torch.Tensor):
        raise Unsupported(f"{kind} of a packed sequence: emulate takes padded sequences")
    values = in_order(kind, ARGUMENTS, args, kwargs)
    x, hx, flat, has_biases, num_layers, dropout, train, bidirectional, batch_first = values
    hiddens = list(hx) if kind == "lstm" else [hx]
    em._check(kind, x, *hiddens, *flat)
    x = x.transpose(0, 1) if batch_first else x
    directions = 2 if bidirectional else 1
    projections = kind == "lstm" and hiddens[0].shape[-1] != hiddens[1].shape[-1]
    params = _layer_params(flat, has_biases, projections, num_layers * directions)
    finals = []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            i = layer * directions + d
            tag = f"l{layer}_reverse" if d else f"l{layer}"

            def gemm(role, a, w, b, tag=tag):  # path.lstm.hh_l0, ...
                return em.layer_gemm(f"{kind}.{role}_{tag}", a, w, b)

            start = (hiddens[0][i], hiddens[1][i]) if kind == "lstm" else hiddens[0][i]
            out, final = _one_direction(gemm, kind, x, start, params[i], d == 1)
            outputs.append(out)
            finals.append(final)
        x = torch.cat(outputs, -1) if directions == 2 else outputs[0]
        if dropout != 0 and train and layer < num_layers - 1:
            x = torch.dropout(x, dropout, True)
    x = x.transpose(0, 1) if batch_first else x
    if kind == "lstm":
        return x, torch.stack([h for h, _ in finals], 0), torch.stack([c for _, c in finals], 0)
    return x, torch.stack(finals, 0)


def cell(em, kind, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell: one step of the cell, its input
    projected in the step (named path.OP_cell.ih and .hh)."""
    x, hidden = input, tuple(hx) if kind == "lstm" else hx
    em._check(f"{kind}_cell", x, *(hidden if kind == "lstm" else [hidden]), w_ih, w_hh, b_ih, b_hh)

    def gemm(role, a, w, b):
        return em.layer_gemm(f"{kind}_cell.{role}", a, w, b)

    return CELLS[kind](gemm, gemm("ih", x, w_ih, b_ih), hidden, w_hh, b_hh, None)
