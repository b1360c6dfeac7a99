#!/usr/bin/env python3
"""The reference of SkillKit's skill digest, version 1, and the maker of
`skill-digest-v1.json`: an implementation independent of the Rust one, so
the vectors check the specification, not the code against itself.

    sha256( b"skillkit-skill-digest-v1\\x00"
            u64be(number of files)
            for each file sorted by its path's UTF-8 bytes:
                u64be(len(path)) path u64be(len(content)) sha256(content) )

written "sha256:<64 lowercase hex>".

Run `python3 skill_digest.py > skill-digest-v1.json` to remake the vectors.
"""
import hashlib
import json
import struct

TAG = b"skillkit-skill-digest-v1\x00"


def digest(files):
    h = hashlib.sha256()
    h.update(TAG)
    h.update(struct.pack(">Q", len(files)))
    for path, content in sorted(files, key=lambda f: f[0].encode()):
        p = path.encode()
        h.update(struct.pack(">Q", len(p)))
        h.update(p)
        h.update(struct.pack(">Q", len(content)))
        h.update(hashlib.sha256(content).digest())
    return "sha256:" + h.hexdigest()


CASES = [
    ("no files", []),
    ("one empty SKILL.md", [("SKILL.md", b"")]),
    ("a skill and a script", [
        ("SKILL.md", b"---\nname: greet\ndescription: Greet someone.\n---\nSay hello.\n"),
        ("scripts/hello.sh", b"echo hello\n"),
    ]),
    ("the same files in another order", [
        ("scripts/hello.sh", b"echo hello\n"),
        ("SKILL.md", b"---\nname: greet\ndescription: Greet someone.\n---\nSay hello.\n"),
    ]),
    ("a byte moved from the path to the content (framed: differs)", [("ab", b"")]),
    ("the other side of that move", [("a", b"b")]),
    ("paths sorted by bytes, not by case or locale", [("B.md", b"1"), ("a.md", b"2"), ("\u00e9.md", b"3")]),
    ("binary content", [("data.bin", bytes(range(256)))]),
]

print(json.dumps([
    {
        "name": name,
        "files": [{"path": p, "content_hex": c.hex()} for p, c in files],
        "digest": digest(files),
    }
    for name, files in CASES
], indent=2))
