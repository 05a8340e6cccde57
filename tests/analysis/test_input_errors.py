"""Every bad input: exit 2, one stderr line naming the file and the problem,
and no output file (or temporary file) left behind."""
import json
import struct

import numpy as np
import pytest

from clean_failure import assert_clean_failure


def npy_bytes(array, version=(1, 0)):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def safetensors_bytes(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


GOOD = np.arange(8, dtype=np.float32)
GOOD_NPY = npy_bytes(GOOD)
GOOD_ST = safetensors_bytes({"w": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}}, GOOD.tobytes())

CASES = {
    "npy_truncated": ("x.npy", GOOD_NPY[:-4], [], "shape and size disagree"),
    "npy_header_truncated": ("x.npy", GOOD_NPY[:40], [], "truncated"),
    "npy_bad_magic": ("x.npy", b"\x93NUMPX" + GOOD_NPY[6:], [], "bad magic"),
    "npy_bad_version": ("x.npy", GOOD_NPY[:6] + b"\x07" + GOOD_NPY[7:], [], "version"),
    "npy_no_shape": ("x.npy", GOOD_NPY.replace(b"'shape'", b"'shapf'"), [], "no 'shape'"),
    "npy_int_dtype": ("x.npy", npy_bytes(np.arange(4, dtype=np.int32)), [], "unsupported dtype '<i4'"),
    "npy_v1_no_dtype": ("x.npy", npy_bytes(np.zeros(4, dtype=np.uint8)).replace(b"|u1", b"|V1"), [], "pass --dtype"),
    "npy_extra_bytes": ("x.npy", GOOD_NPY + b"\0\0\0\0", [], "shape and size disagree"),
    "st_truncated": ("x.safetensors", GOOD_ST[:-8], [], "outside"),
    "st_header_past_end": ("x.safetensors", struct.pack("<Q", 1000) + b"{}", [], "header runs past"),
    "st_bad_json": ("x.safetensors", struct.pack("<Q", 7) + b'{"w": 1' , [], "malformed safetensors header"),
    "st_unknown_dtype": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F12", "shape": [8], "data_offsets": [0, 32]}}, GOOD.tobytes()), [], "unknown dtype 'F12'"),
    "st_shape_size": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F32", "shape": [9], "data_offsets": [0, 32]}}, GOOD.tobytes()), [], "shape and size disagree"),
    "st_overlap": ("x.safetensors", safetensors_bytes({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                                      "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, GOOD.tobytes()), [], "overlap"),
    "csv_not_number": ("x.csv", b"g\n1.5\nabc\n", [], "line 3: 'abc' is not a number"),
    "csv_empty_cell": ("x.csv", b"a,g\n1,2\n3,\n", ["--column", "g"], "line 3: empty cell"),
    "csv_no_column": ("x.csv", b"a,g\n1,2\n", ["--column", "h"], "no column 'h'"),
    "csv_empty": ("x.csv", b"", [], "empty CSV"),
    "raw_no_dtype": ("x.bin", GOOD.tobytes(), [], "pass --dtype"),
    "raw_unknown_dtype": ("x.bin", GOOD.tobytes(), ["--dtype", "float7"], "float7"),
    "raw_shape_size": ("x.bin", GOOD.tobytes(), ["--dtype", "fp32", "--shape", "3,3"], "shape and size disagree"),
    "raw_size": ("x.bin", GOOD.tobytes()[:-1], ["--dtype", "fp32"], "not a multiple"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file(fmtcheck, tmp_path, case):
    name, content, args, message = CASES[case]
    (tmp_path / name).write_bytes(content)
    # A good file first: its results must not be written either.
    (tmp_path / "good.npy").write_bytes(GOOD_NPY)
    r = fmtcheck("analyze", tmp_path / "good.npy", tmp_path / name, *args, "--csv", tmp_path / "out.csv",
                 "--histogram-csv", tmp_path / "out_hist.csv", "--json", tmp_path / "out.json")
    assert_clean_failure(r, tmp_path, [] if case == "raw_unknown_dtype" else [name], message)


def test_missing_path(fmtcheck, tmp_path):
    r = fmtcheck("analyze", tmp_path / "nope.npy", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["nope.npy"], "no such file")


def test_unreadable_path(fmtcheck, tmp_path):
    r = fmtcheck("analyze", tmp_path, "--dtype", "fp32", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [str(tmp_path)], "not a regular file")


@pytest.mark.parametrize("args,message", [
    (["--scale", "pow2:x"], "bad --scale"), (["--scale", "amax:"], "bad --scale"), (["--scale-rule", "up"], "bad --scale-rule"),
    (["--block", "32", "--scale", "auto"], "cannot be combined"), (["--tensors", "("], "bad --tensors"),
    (["--tensors", "nomatch"], "no tensors"), (["--formats", "fp16,float7"], "float7"), (["--round", "up"], "bad --round")])
def test_bad_options(fmtcheck, tmp_path, args, message):
    (tmp_path / "good.npy").write_bytes(GOOD_NPY)
    r = fmtcheck("analyze", tmp_path / "good.npy", *args, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [], message)


def write_steps(folder, steps):
    folder.mkdir()
    for i in steps:
        np.save(folder / f"step_{i:04d}.npy", GOOD)


def test_trace_missing_step(fmtcheck, tmp_path):
    write_steps(tmp_path / "trace", [0, 1, 3])
    r = fmtcheck("scale", tmp_path / "trace", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["trace"], "step 2 is missing")


def test_trace_empty_folder_and_bad_manifest(fmtcheck, tmp_path):
    (tmp_path / "empty").mkdir()
    r = fmtcheck("scale", tmp_path / "empty", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["empty"], "no step files")
    (tmp_path / "m.txt").write_text("step_0000.npy\n")
    r = fmtcheck("scale", tmp_path / "m.txt", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["m.txt", "step_0000.npy"], "does not exist")
    r = fmtcheck("scale", tmp_path / "nothing", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["nothing"], "no such file")


def test_trace_bad_step_file(fmtcheck, tmp_path):
    write_steps(tmp_path / "trace", [0, 1])
    (tmp_path / "trace" / "step_0001.npy").write_bytes(GOOD_NPY[:-3])
    r = fmtcheck("scale", tmp_path / "trace", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["step_0001.npy"], "shape and size disagree")


@pytest.mark.parametrize("args,message", [(["--recipe", "fast"], "bad --recipe"), (["--format", "hybrid"], "hybrid applies"),
                                          (["--recipe", "delayed", "--history", "0"], "--history"),
                                          (["--amax-compute", "mean"], "bad --amax-compute"), (["--hysteresis", "0"], "--hysteresis")])
def test_scale_bad_options(fmtcheck, tmp_path, args, message):
    write_steps(tmp_path / "trace", [0])
    r = fmtcheck("scale", tmp_path / "trace", *args, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [], message)
