"""Writes the hand-made seeds of the lerobot_parquet and text_documents fuzz targets.

Run from the repository root with the venv's Python (pyarrow):
    python tests/fuzz/make_parquet_seeds.py
The real tables of tests/data/lerobot-tiny-v3 (seeds themselves, named by scripts/fuzz.sh and
the ctest replay) are rewritten without compression, dictionaries or statistics (values in the clear, so that byte mutations reach
them), and edge cases are written next to them: numbers that overflow what is computed from
them, wrong types, nulls, lists of the wrong size, columns of unequal length across row groups.
"""
import os

import pyarrow as pa
import pyarrow.parquet as pq

TINY = "tests/data/lerobot-tiny-v3"
LEROBOT = "tests/fuzz/lerobot_parquet_corpus"
TEXT = "tests/fuzz/text_documents_corpus"
I64_MAX = 2**63 - 1


def plain(table, path):
    pq.write_table(table, path, compression="NONE", use_dictionary=False, write_statistics=False)


def with_column(table, name, values, type_=None):
    i = table.schema.get_field_index(name)
    return table.set_column(i, name, pa.array(values, type=type_ or table.schema.field(i).type))


def lerobot():
    os.makedirs(LEROBOT, exist_ok=True)
    real = {
        "tasks": f"{TINY}/image/meta/tasks.parquet",
        "episodes_video": f"{TINY}/video/meta/episodes/chunk-000/file-000.parquet",
        "episodes_image": f"{TINY}/image/meta/episodes/chunk-000/file-000.parquet",
        "data_image": f"{TINY}/image/data/chunk-000/file-000.parquet",
        "data_video": f"{TINY}/video/data/chunk-000/file-000.parquet",
    }
    for name, path in real.items():
        plain(pq.read_table(path), f"{LEROBOT}/plain_{name}")

    episodes = pq.read_table(real["episodes_video"])
    n = episodes.num_rows
    # dataset_to_index - dataset_from_index overflows int64.
    e = with_column(episodes, "dataset_from_index", [-1] * n)
    plain(with_column(e, "dataset_to_index", [I64_MAX] * n), f"{LEROBOT}/edge_index_overflow")
    # An episode claiming 2^40 frames (length consistent with its range).
    e = with_column(episodes, "length", [2**40] * n)
    plain(with_column(e, "dataset_to_index", [2**40] * n), f"{LEROBOT}/edge_huge_episode")
    plain(with_column(episodes, "episode_index", [0] * n), f"{LEROBOT}/edge_duplicate_episode")
    plain(with_column(episodes, "length", [str(v) for v in range(n)], pa.string()), f"{LEROBOT}/edge_length_strings")
    plain(with_column(episodes, "length", [None] * n, pa.int64()), f"{LEROBOT}/edge_length_nulls")
    plain(episodes.slice(0, 0), f"{LEROBOT}/edge_no_rows")
    # Row groups of one row each: every column in as many chunks.
    pq.write_table(episodes, f"{LEROBOT}/edge_row_groups", row_group_size=1, compression="NONE")

    data = pq.read_table(real["data_image"])
    rows = data.num_rows
    state = data.column("observation.state").to_pylist()
    plain(with_column(data, "observation.state", [s[:-1] for s in state], pa.list_(pa.float32())),
          f"{LEROBOT}/edge_state_short_lists")
    plain(with_column(data, "observation.state", [[s] for s in state], pa.list_(pa.list_(pa.float32()))),
          f"{LEROBOT}/edge_state_nested_deeper")
    plain(with_column(data, "observation.state", [None] + state[1:], pa.list_(pa.float32())),
          f"{LEROBOT}/edge_state_null")
    plain(with_column(data, "index", [0] * rows), f"{LEROBOT}/edge_index_repeated")
    plain(with_column(data, "index", [float(i) for i in range(rows)], pa.float64()), f"{LEROBOT}/edge_index_doubles")
    images = data.column("observation.images.top").to_pylist()
    plain(with_column(data, "observation.images.top", [{"bytes": None, "path": None}] + images[1:]),
          f"{LEROBOT}/edge_image_null")
    plain(data.drop_columns(["action"]), f"{LEROBOT}/edge_no_action")
    pq.write_table(data, f"{LEROBOT}/edge_data_row_groups", row_group_size=3, compression="NONE")

    tasks = pq.read_table(real["tasks"])
    plain(pa.table({"task_index": [0, 0], "task": ["a", "b"]}), f"{LEROBOT}/edge_tasks_twice")
    plain(pa.table({"task_index": [0, 1], "task": [["a"], ["b"]]}), f"{LEROBOT}/edge_tasks_lists")
    plain(tasks.rename_columns([c.upper() for c in tasks.column_names]), f"{LEROBOT}/edge_tasks_renamed")


def text():
    os.makedirs(TEXT, exist_ok=True)
    plain(pa.table({"text": ["first document", "", "third, with \"quotes\"\nand a line"]}), f"{TEXT}/parquet_text")
    messages = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    plain(pa.table({"messages": pa.array([[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                                          None], type=messages),
                    "text": ["fallback", "used when messages is null"]}), f"{TEXT}/parquet_messages")
    plain(pa.table({"text": pa.array([{"a": [1, 2], "b": {"c": 1.5}}])}), f"{TEXT}/parquet_nested")
    plain(pa.table({"text": pa.array([1, 2, 3], pa.int64())}), f"{TEXT}/parquet_ints")
    pq.write_table(pa.table({"text": [f"row {i}" for i in range(8)]}), f"{TEXT}/parquet_row_groups",
                   row_group_size=3, compression="NONE")
    # Two row groups whose columns hold different numbers of rows cannot be written by pyarrow; a
    # file whose `messages` column is shorter than `text` is left to the fuzzer's mutations.
    with open(f"{TEXT}/jsonl_text", "w") as f:
        f.write('{"text": "one"}\n{"text": "two", "extra": [1, {"x": null}]}\n\n{"text": ""}\n')
    with open(f"{TEXT}/jsonl_messages", "w") as f:
        f.write('{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}\n')
    with open(f"{TEXT}/csv_text", "w") as f:
        f.write('id,text\n1,"a, quoted ""cell""\nover lines"\n2,plain\n')
    with open(f"{TEXT}/csv_python_messages", "w") as f:
        f.write("text\n\"[{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': (1, None, True)}]\"\n")
    with open(f"{TEXT}/txt_paragraphs", "w") as f:
        f.write("first paragraph\nstill first\n\n\nsecond\r\n\r\nthird\n")


if __name__ == "__main__":
    lerobot()
    text()
