#!/usr/bin/env python3
"""Turns swift-api-digester's JSON dump of one module into a sorted text listing.

One line per public declaration: its path inside the module, its kind, its signature
(generic signature, parameter and result types, throwing, static, mutating), and the
conformances of a type, so that any change of the public API, an addition included,
shows as a line added or removed in a reviewed diff. Implicit declarations (derived
conformances' members) are left out: they follow from the conformances listed.

Usage: api-text.py DUMP.json > API/Module.txt
"""
import json
import sys

KEEP_ATTRIBUTES = {"Rethrows", "Final", "Inlinable", "UsableFromInline", "Frozen", "Available", "Sendable",
                   "Preconcurrency", "DiscardableResult", "Consuming", "Borrowing"}


# Conformances every type has, or that the toolchain adds on its own: not the module's API.
IMPLIED = {"Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"}

# The protocols the module declares (set by main): a type of another module (an extension
# of `Array`) lists only the conformances to these, not its own module's.
OWN_PROTOCOLS = set()


def signature(node):
    parts = []
    generic = node.get("genericSig")
    if generic and not (node.get("isExternal") and node.get("declKind") != "Func"):
        parts.append(generic)
    types = [c.get("printedName", "") for c in node.get("children", []) if c.get("kind", "").startswith("Type")]
    if types and node.get("kind") in ("Function", "Constructor", "Subscript"):
        parts.append("(" + ", ".join(types[1:]) + ") -> " + types[0])
    elif types:
        parts.append(": " + ", ".join(types))
    for flag in ("static", "throwing", "mutating", "isOpen", "isInternal"):
        if node.get(flag):
            parts.append(flag)
    kind = node.get("funcSelfKind")
    if kind and kind != "NonMutating":
        parts.append(kind)
    attributes = sorted(a for a in node.get("declAttributes", []) if a in KEEP_ATTRIBUTES)
    if attributes:
        parts.append("@" + " @".join(attributes))
    if node.get("declKind") == "Var":
        setters = [a.get("name") for a in node.get("accessors", []) if a.get("name") in ("Set", "Modify")]
        parts.append("{ get" + (" set" if setters else "") + " }")
    conformances = sorted(
        c.get("printedName", "") for c in node.get("conformances", [])
        if c.get("printedName") not in IMPLIED and (not node.get("isExternal") or c.get("printedName") in OWN_PROTOCOLS))
    if conformances:
        parts.append("conforms to " + ", ".join(conformances))
    return " ".join(parts)


def walk(node, path, out):
    for child in node.get("children", []):
        kind = child.get("declKind")
        if not kind or kind in ("Import", "Accessor") or child.get("implicit"):
            continue
        name = child.get("printedName", child.get("name", "?"))
        here = path + [name]
        out.append(f"{'.'.join(here)} [{kind}] {signature(child)}".rstrip())
        walk(child, here, out)


def main():
    with open(sys.argv[1]) as f:
        dump = json.load(f)
    OWN_PROTOCOLS.update(
        c.get("printedName") for c in dump["ABIRoot"].get("children", []) if c.get("declKind") == "Protocol")
    lines = []
    walk(dump["ABIRoot"], [], lines)
    for line in sorted(set(lines)):
        print(line)


if __name__ == "__main__":
    main()
