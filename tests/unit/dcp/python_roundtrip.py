"""Checks with PyTorch's own DCP that a `.metadata` written by shardkit's C++ writer reads back.

Run with the venv's Python (torch 2.15):
    python_roundtrip.py FOLDER [--expect FILE] [--reference CHECKPOINT]

FOLDER     a checkpoint folder whose `.metadata` the C++ writer wrote (and, for --reference,
           copies of the reference checkpoint's .distcp files).
--expect   a Python-written `.metadata`: FileSystemReader(FOLDER).read_metadata() must equal
           it field by field, in the same dict order, MetadataIndex.index included.
--reference  the Python-written checkpoint FOLDER's data came from: dcp.load from FOLDER and
           from it must give the same tensors and byte items.
Prints OK and exits 0 when every check passes; otherwise prints why and exits 1.
"""

import argparse
import pickle
import sys
import warnings

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.metadata import BytesStorageMetadata

NOT_LOADED = "<placeholder: dcp.load did not write this byte item>"


def describe(md):
    """Everything in a Metadata, as plain data in file order (dataclass == ignores
    dict order and MetadataIndex.index)."""
    meta = md.storage_meta
    return {
        "state_dict_metadata": [(k, repr(v)) for k, v in md.state_dict_metadata.items()],
        "planner_data": None if md.planner_data is None else list(md.planner_data.items()),
        "storage_data": None if md.storage_data is None else [
            (k.fqn, k.offset, k.index, repr(v)) for k, v in md.storage_data.items()],
        "storage_meta": None if meta is None else (
            meta.checkpoint_id, type(meta.checkpoint_id).__name__, meta.save_id, meta.modules),
        "version": md.version,
    }


def compare(name_a, a, name_b, b):
    da, db = describe(a), describe(b)
    ok = True
    for field in da:
        if da[field] != db[field]:
            ok = False
            print(f"MISMATCH in {field}:\n  {name_a}: {da[field]}\n  {name_b}: {db[field]}")
    if a != b:
        ok = False
        print("MISMATCH: the Metadata objects differ (dataclass ==)")
    return ok


def load_all(folder, md, fill):
    """dcp.load of every entry of `md` from `folder` into tensors filled with `fill` (each
    side uses its own fill, so an entry that no load wrote shows up as a difference)."""
    state = {}
    for fqn, entry in md.state_dict_metadata.items():
        if isinstance(entry, BytesStorageMetadata):
            state[fqn] = NOT_LOADED
        else:
            state[fqn] = torch.full(tuple(entry.size), fill, dtype=torch.float32).to(entry.properties.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.load(state, checkpoint_id=folder)
    return state


def same_value(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.is_floating_point and a.element_size() == 1:  # float8: compare bits
            return torch.equal(a.view(torch.uint8), b.view(torch.uint8))
        return torch.equal(a, b)
    return a == b


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--expect")
    parser.add_argument("--reference")
    args = parser.parse_args()

    md = dcp.FileSystemReader(args.folder).read_metadata()
    md.storage_meta.load_id = None  # read_metadata stamps a fresh uuid
    ok = True
    if args.expect:
        with open(args.expect, "rb") as f:
            expected = pickle.load(f)
        ok = compare("C++-written", md, "expected", expected) and ok
    if args.reference:
        ref = dcp.FileSystemReader(args.reference).read_metadata()
        ref.storage_meta.load_id = None
        got = load_all(args.folder, md, 7)
        want = load_all(args.reference, ref, 3)
        if list(got) != list(want):
            ok = False
            print("MISMATCH: loaded keys differ")
        for fqn in want:
            if fqn in got and not same_value(got[fqn], want[fqn]):
                ok = False
                print(f"MISMATCH: dcp.load gives a different value for {fqn}")
        untouched = [k for k, v in got.items() if isinstance(v, str) and v == NOT_LOADED]
        if untouched:
            ok = False
            print(f"MISMATCH: byte items not loaded: {untouched}")
        print(f"dcp.load: {len(got)} entries compared")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
