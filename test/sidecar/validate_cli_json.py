#!/usr/bin/env python3
"""Runs `idxmap analyze|indexing|partition|bounds|is-empty|parse|simplify|compose|eval
--format=json` on
the example modules and map files and validates each document against
docs/cli-json.schema.json (python3-jsonschema, no network). Also checks what
a schema cannot say: the JSON carries the text output's facts (the same
answers, maps and plan), bad input still gives the located error on stderr,
exit 1 and no document, and --dot with --format=json is a usage error.

usage: validate_cli_json.py IDXMAP SCHEMA TESTDIR
  TESTDIR: the repository's test/ (examples/ and golden/ are read)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("error: python3-jsonschema is needed (apt-get install "
             "python3-jsonschema; tools/deps.sh installs it)")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def idxmap(args, code=0):
    r = subprocess.run([IDXMAP] + args, capture_output=True, text=True)
    check(r.returncode == code, "idxmap %s: exit %d, expected %d\n%s" % (
        " ".join(args), r.returncode, code, r.stderr))
    return r


def document(args):
    """The JSON of `idxmap ARGS --format=json`, validated, and the text
    output of the same command; None when the command fails, after checking
    that it fails alike with --format=json (same exit code and stderr, no
    document)."""
    t = subprocess.run([IDXMAP] + args, capture_output=True, text=True)
    r = subprocess.run([IDXMAP] + args + ["--format=json"],
                       capture_output=True, text=True)
    check(r.returncode == t.returncode and r.stderr == t.stderr,
          "idxmap %s: --format=json exits %d, text %d\n%s" % (
              " ".join(args), r.returncode, t.returncode, r.stderr))
    if t.returncode != 0 and not t.stdout:
        check(r.stdout == "", "%s: a document on failure" % " ".join(args))
        return None, None
    doc = json.loads(r.stdout)  # strict: one document, nothing else
    errors = sorted(VALIDATOR.iter_errors(doc), key=str)
    check(not errors, "%s: %s" % (" ".join(args), "; ".join(
        "%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
        for e in errors[:5])))
    global CHECKED
    CHECKED += 1
    return doc, t.stdout


def answers(text):
    """The per-map lines of a split text output."""
    return [l for l in text.splitlines() if l != "// -----"]


def check_per_map(cmd, path, extra):
    doc, text = document([cmd, "--split-input-file", path] + extra)
    check(doc is not None, "%s %s failed" % (cmd, path))
    check(doc["command"] == cmd, "%s: command" % path)
    got = [r.get("text", r["result"]) for r in doc["results"]]
    check(got == answers(text), "%s %s: JSON %s, text %s" % (
        cmd, path, got, answers(text)))
    check([r["chunk"] for r in doc["results"]] ==
          list(range(len(doc["results"]))), "%s: chunk order" % path)
    for r in doc["results"]:
        if r["result"] == "bounds":
            check(r["text"] == "[%d, %d]" % (r["lo"], r["hi"]),
                  "%s: lo/hi disagree with %s" % (path, r["text"]))


def check_analyze(path):
    doc, text = document(["analyze", path])
    if doc is None:
        return
    for f in doc["fusions"]:
        check("emitter: %s\n" % f["emitter"] in text, "%s: emitter" % path)
        check("reason: %s\n" % f["reason"] in text, "%s: reason" % path)
        check(f["threads"]["map"] in text, "%s: thread map" % path)
        for p in f["output_to_parameter"]:
            for m in p["maps"]:
                check(m is None or "%s: %s\n" % (p["parameter"], m) in text,
                      "%s: map of %s" % (path, p["parameter"]))
        if f["plan"]:
            plan = f["plan"]
            check(plan["text"].splitlines()[0] in text, "%s: plan" % path)
            check("grid [%d, %d, %d]" % tuple(plan["grid"]) in plan["text"],
                  "%s: grid" % path)
            for c in plan["choices"]:
                check("%s = %d" % (c["name"], c["value"]) in plan["text"],
                      "%s: choice %s" % (path, c["name"]))
        names = [c["name"] for c in f["coalescing"]]
        check(len(names) > 0, "%s: no coalescing rows" % path)
    check(len(doc["fusions"]) + len(doc["skipped"]) > 0, "%s: empty" % path)


def check_partition(path):
    doc, text = document(["partition", path])
    if doc is None:
        return
    for pc in doc["computations"]:
        check("computation %s:" % pc["computation"] in text,
              "%s: computation" % path)
        for sg in pc["subgraphs"]:
            for i in sg["instructions"]:
                line = "  %s = %s: %s\n" % (
                    i["name"], i["opcode"], i["map"] or "unknown indexing")
                check(line in text, "%s: %s" % (path, line.strip()))


def check_indexing(args):
    doc, text = document(["indexing"] + args)
    if doc is None:
        return
    blocks = text.split("operand id = ")[1:]
    check(len(blocks) == len(doc["operands"]), "%s: blocks" % args)
    for b, j in zip(blocks, doc["operands"]):
        check(b.startswith("%d\n" % j["id"]), "%s: operand id" % args)
        for m in j["maps"]:
            check((m["map"] or "unknown indexing") + "\n" in b,
                  "%s: map %s" % (args, m["map"]))


def validated(doc, what):
    errors = sorted(VALIDATOR.iter_errors(doc), key=str)
    check(not errors, "%s: %s" % (what, "; ".join(
        "%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
        for e in errors[:5])))
    global CHECKED
    CHECKED += 1
    return doc


def check_split(tmp, modules):
    """--split-input-file with --format=json prints ONE document: the
    chunks' documents under "chunks", each the same as the module's own
    document; a rejected chunk has no entry and makes the exit code 1."""
    bad = "HloModule bad\nENTRY e {\n  p = f32[4] parameter(0\n}\n"
    texts = []
    for m in modules:
        with open(m) as f:
            texts.append(f.read())
    path = os.path.join(tmp, "split.hlo")
    with open(path, "w") as f:
        f.write("\n// -----\n".join([texts[0], bad, texts[1]]))
    for cmd in ("analyze", "indexing", "partition"):
        r = idxmap([cmd, "--split-input-file", path, "--format=json"], 1)
        doc = validated(json.loads(r.stdout), "%s split" % cmd)
        check(doc["command"] == cmd and doc["split"] is True,
              "%s split: frame %s" % (cmd, list(doc)))
        check([c["chunk"] for c in doc["chunks"]] == [0, 2],
              "%s split: chunks %s" % (cmd, [c["chunk"] for c in doc["chunks"]]))
        check(doc["chunks"][0]["first_line"] == 1, "%s split: line" % cmd)
        check(doc["chunks"][1]["first_line"] ==
              texts[0].count("\n") + bad.count("\n") + 5,
              "%s split: first_line %d" % (cmd, doc["chunks"][1]["first_line"]))
        # The unclosed parameter( is found at the bad chunk's fourth line
        # ("}"), given at the file's own line number.
        check("%s:%d:1: error: expected ')'" % (
            path, texts[0].count("\n") + 6) in r.stderr,
              "%s split: no located error for chunk 1: %s" % (cmd, r.stderr))
        for c, m in zip(doc["chunks"], modules):
            one = json.loads(idxmap([cmd, m, "--format=json"]).stdout)
            check(c["document"] == one,
                  "%s split: chunk %d differs from %s alone" % (
                      cmd, c["chunk"], m))
        # Every chunk good: exit 0, and -o writes the same one document.
        good = os.path.join(tmp, "good.hlo")
        with open(good, "w") as f:
            f.write("\n// -----\n".join(texts))
        out = os.path.join(tmp, "out.json")
        idxmap([cmd, "--split-input-file", good, "--format=json", "-o", out])
        with open(out) as f:
            doc = validated(json.load(f), "%s split -o" % cmd)
        check(len(doc["chunks"]) == 2, "%s split -o: chunks" % cmd)


def sections(text):
    """The per-chunk sections of a split text output."""
    return text.split("// -----\n")


def check_map_command(cmd, path, extra, pairs=False):
    """parse, simplify, compose and eval: the document's results carry the
    text output's answers, section for section; a chunk that failed has no
    result (and an empty text section)."""
    doc, text = document([cmd, "--split-input-file", path] + extra)
    check(doc is not None, "%s %s failed" % (cmd, path))
    check(doc["command"] == cmd, "%s %s: command" % (cmd, path))
    secs = sections(text)
    chunks = [r["chunk"] for r in doc["results"]]
    check(chunks == sorted(set(chunks)), "%s %s: chunk order" % (cmd, path))
    answered = [i for i, sec in enumerate(secs) if sec]
    check(chunks == answered, "%s %s: results for chunks %s, text for %s" % (
        cmd, path, chunks, answered))
    for r in doc["results"]:
        sec = secs[r["chunk"]]
        if cmd == "eval":
            want = ("(%s)\n" % ", ".join(map(str, r["values"]))
                    if r["result"] == "point" else
                    "outside domain: the map is KNOWN EMPTY\n"
                    if r["reason"] is None else
                    "outside domain%s\n" % (
                        ": " + r["reason"] if r["reason"] else ""))
        else:
            want = r["text"] + "\n"
            check(len(r["exprs"]) == 0 or r["map"].startswith("("),
                  "%s %s: map %s" % (cmd, path, r["map"]))
            if r["text"] == r["map"] and not r["undefined"] and \
                    not r["known_empty"]:
                # The parts are the printed map's.
                for v in r["variables"]:
                    check(v["name"] in r["map"], "%s: variable %s" % (
                        path, v["name"]))
                for e in r["exprs"]:
                    check(e in r["map"], "%s: result %s" % (path, e))
        check(sec == want, "%s %s chunk %d: text %r, JSON gives %r" % (
            cmd, path, r["chunk"], sec, want))
    return doc


def check_map_commands(tmp):
    golden = os.path.join(TESTDIR, "golden")
    check_map_command("parse", os.path.join(golden, "parse-roundtrip.txt"), [])
    check_map_command("parse", os.path.join(golden, "mlir.txt"),
                      ["--output-format=mlir"])
    doc = check_map_command("simplify",
                            os.path.join(golden, "simplify-flags.txt"),
                            ["--remove-unused"])
    check(any(r["changed"] for r in doc["results"]) and
          not all(r["changed"] for r in doc["results"]),
          "simplify: 'changed' is the same for every map")
    check_map_command("compose", os.path.join(golden, "compose.txt"), [])
    check_map_command("compose", os.path.join(golden, "compose.txt"),
                      ["--simplify"])
    check_map_command("eval", os.path.join(golden, "eval.txt"),
                      ["--at", "d0=3,s0=1"])
    # One map, no split: one result at chunk 0; the parts are exact.
    one = os.path.join(tmp, "one.map")
    with open(one, "w") as f:
        f.write("(d0)[s0]{rt0} -> (d0 + s0, rt0), domain: d0 in [0, 3], "
                "s0 in [0, 1], rt0 in [-5, 9], d0 + s0 in [1, 4]\n")
    doc = json.loads(idxmap(["parse", one, "--format=json"]).stdout)
    validated(doc, "parse one")
    r = doc["results"][0]
    check((r["chunk"], r["first_line"]) == (0, 1), "parse one: chunk")
    check(r["variables"] == [
        {"name": "d0", "kind": "dim", "lo": 0, "hi": 3},
        {"name": "s0", "kind": "range", "lo": 0, "hi": 1},
        {"name": "rt0", "kind": "runtime", "lo": -5, "hi": 9}],
        "parse one: variables %s" % r["variables"])
    check(r["exprs"] == ["d0 + s0", "rt0"], "parse one: exprs %s" % r["exprs"])
    check(r["constraints"] == [{"expr": "d0 + s0", "lo": 1, "hi": 4}],
          "parse one: constraints %s" % r["constraints"])
    doc = json.loads(idxmap(["compose", one, one, "--format=json"], 1).stdout
                     or "null")
    check(doc is None, "compose: a document for a rejected pair")
    doc = validated(json.loads(idxmap(
        ["eval", one, "--at", "1,1,7", "--format=json"]).stdout), "eval one")
    check(doc["results"][0]["values"] == [2, 7] and doc["at"] == "1,1,7",
          "eval one: %s" % doc["results"][0])


def check_errors(tmp):
    bad = os.path.join(tmp, "bad.map")
    with open(bad, "w") as f:
        f.write("(d0) -> (d0 +, domain: d0 in [0, 3]\n")
    for cmd in (["bounds", "--expr", "d0"], ["is-empty"], ["parse"],
                ["simplify"], ["eval", "--at", "0"]):
        r = idxmap(cmd + [bad, "--format=json"], 1)
        check(r.stdout == "", "%s: a document on bad input" % cmd[0])
        check(r.stderr.startswith(bad + ":1:14: error: "),
              "%s: not a located error: %s" % (cmd[0], r.stderr))
    badhlo = os.path.join(tmp, "bad.hlo")
    with open(badhlo, "w") as f:
        f.write("HloModule m\nENTRY e {\n  p = f32[4] parameter(0\n}\n")
    for cmd in (["analyze"], ["partition"], ["indexing"]):
        r = idxmap(cmd + [badhlo, "--format=json"], 1)
        check(r.stdout == "", "%s: a document on bad input" % cmd[0])
        check(r.stderr.startswith(badhlo + ":"),
              "%s: not a located error: %s" % (cmd[0], r.stderr))
    gelu = os.path.join(TESTDIR, "examples", "gelu.hlo")
    idxmap(["partition", gelu, "--dot", "--format=json"], 2)
    idxmap(["bounds", "--expr", "d0", gelu, "--format=xml"], 2)


def main():
    global IDXMAP, VALIDATOR, TESTDIR, CHECKED
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    IDXMAP, schema_path, TESTDIR = sys.argv[1:]
    CHECKED = 0
    with open(schema_path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    VALIDATOR = cls(schema)
    examples = os.path.join(TESTDIR, "examples")
    inputs = os.path.join(TESTDIR, "golden", "Inputs")
    golden = os.path.join(TESTDIR, "golden")
    modules = sorted(os.path.join(examples, f) for f in os.listdir(examples)
                     if f.endswith(".hlo"))
    modules += [os.path.join(inputs, f) for f in (
        "whole_module_gemm.hlo", "no-fusion.hlo", "multi-output.hlo",
        "indexed-ops.hlo", "dynamic-slice.hlo")]
    for m in modules:
        check_analyze(m)
        check_partition(m)
        check_indexing([m])
    indexed = os.path.join(inputs, "indexed-ops.hlo")
    for args in (["--instruction", "gather"], ["--instruction", "scatter"],
                 ["--instruction", "sort", "--output-id", "1"],
                 ["--instruction", "sort", "--direction", "input-to-output",
                  "--operand", "1"], ["--instruction", "ds"]):
        check_indexing([indexed] + args)
    check_indexing([os.path.join(examples, "gelu.hlo"), "--first-fusion",
                    "--fusion-root"])
    check_per_map("bounds", os.path.join(golden, "bounds.txt"),
                  ["--expr", "d0 mod 4 + s0"])
    check_per_map("is-empty", os.path.join(golden, "is-empty.txt"), [])
    with tempfile.TemporaryDirectory() as tmp:
        check_errors(tmp)
        check_map_commands(tmp)
        check_split(tmp, [os.path.join(examples, "gelu.hlo"),
                          os.path.join(TESTDIR, "sidecar", "chain.hlo")])
    print("validated %d documents against %s" % (CHECKED, schema_path))


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        sys.exit("FAIL: %s" % e)
