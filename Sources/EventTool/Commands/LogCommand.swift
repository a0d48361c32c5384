import EventGraph
internal import EventGraphText

struct LogCommand: ToolCommand {
  let spec = CommandSpec(
    name: "log", abstract: "Print the events of the log.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("from", valueName: "SEQ", help: "Start at event SEQ."),
      OptionSpec("to", valueName: "SEQ", help: "Stop after event SEQ."),
      OptionSpec("object", valueName: "ID", help: "Only the events about this object (Entity/N), from its history."),
      OptionSpec("json", help: "One JSON object per event (Docs/formats.md)."),
      OptionSpec("follow", help: "Keep printing new commits as they land, from any process, until interrupted."),
      OptionSpec(
        "consumer", valueName: "NAME",
        help: "With --follow: a durable consumer; start after its saved position and save it as commits are printed."),
      OptionSpec("commits", valueName: "N", help: "With --follow: stop after printing N commits."),
      readVersionOption,
    ],
    examples: [
      "eventtool log book.store", "eventtool log book.store --object AddressBook/1 --json",
      "eventtool log book.store --follow --consumer audit", "eventtool log book.store --version 2",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let from = try a.sequence("from") ?? 1
    let to = try a.sequence("to") ?? .max
    // An empty range would print nothing and succeed, as if the log were empty.
    guard to >= from else {
      throw ToolError.usage(
        a.value("from") == nil
          ? "--to \(to) is before the first event (sequence 1)"
          : "--to \(to) is before --from \(from): the range would be empty")
    }
    let json = a.flag("json")
    if a.flag("follow") {
      if a.value("version") != nil {
        throw ToolError.usage("--version does not go with --follow: a follower reads the version the store is at")
      }
      return try LogFollow.run(a, io, from: from, to: to, json: json)
    }
    for option in ["consumer", "commits"] where a.value(option) != nil {
      throw ToolError.usage("--\(option) goes with --follow")
    }
    let store = try openStore(try a.required("STORE"))
    try read(store, a) { s in
      if let text = a.value("object") {
        let id = try Self.identity(text, in: s)
        for first in try s.history(of: id) where first <= to {
          for c in try Self.commits(at: first, in: s) where c.lastSequence >= from {
            Self.show(c, in: s, io: io, json: json, from: from, to: to, only: id)
          }
        }
      } else {
        try s.forEachCommit(from: from, to: to) {
          Self.show($0, in: s, io: io, json: json, from: from, to: to, only: nil)
        }
      }
    }
  }

  /// Prints a commit's header (text form only) and its events in `from...to`.
  static func show(
    _ commit: Commit, in s: Snapshot, io: ToolIO, json: Bool, from: UInt64, to: UInt64, only: ObjectID?
  ) {
    if let base = commit.metadata.base {
      return showBase(commit, base, in: s, io: io, json: json, only: only)
    }
    if !json {
      var header = "commit \(commit.number)  \(ISO8601.format(commit.time))  v\(commit.modelVersion)"
      if let author = commit.metadata.author { header += "  by \(author)" }
      if let source = commit.metadata.sourceCommit { header += "  from source commit at \(source)" }
      if let root = commit.metadata.clonedFrom { header += "  cloned from \(s.display(root))" }
      io.print(header)
    }
    for (seq, e) in commit.sequencedEvents where seq >= from && seq <= to {
      if let only, !concerns(e, only) { continue }
      io.print(json ? s.jsonText(e, sequence: seq, commit: commit) : "  " + s.text(e, sequence: seq))
    }
  }

  /// A truncated log's base: one line of its own (`"type": "base"` in JSON, with the
  /// objects it holds), and in text its events, which hold the graph as of its cut.
  static func showBase(
    _ commit: Commit, _ base: HistoryBase, in s: Snapshot, io: ToolIO, json: Bool, only: ObjectID?
  ) {
    var objects: [ObjectID] = []
    for e in commit.events { if case .insert(let o, _) = e, only == nil || o == only { objects.append(o) } }
    if json {
      io.print(
        JSON.object([
          JSONField("type", .string("base")), JSONField("commit", .int(Int64(commit.number))),
          JSONField("seq", .int(Int64(commit.firstSequence))), JSONField("lastSeq", .int(Int64(base.lastSequence))),
          JSONField("time", .string(ISO8601.format(commit.time))),
          JSONField("truncatedAt", .string(ISO8601.format(base.truncatedAt))),
          JSONField("objects", .array(objects.map { .string(s.display($0)) })),
        ]).serialized())
      return
    }
    io.print(
      "base of commits 1...\(commit.number)  \(ISO8601.format(commit.time))  v\(commit.modelVersion)  history before sequence \(base.lastSequence + 1) truncated on \(ISO8601.format(base.truncatedAt)); \(objects.count) objects as of sequence \(base.lastSequence)"
    )
    for (seq, e) in commit.sequencedEvents {
      if let only, !concerns(e, only) { continue }
      io.print("  " + s.text(e, sequence: seq))
    }
  }

  /// The commit of an object's history entry at sequence `first`.
  ///
  /// The object's version at a truncated log's cut names a commit the base replaced: the
  /// base holds the object as that commit left it, and is given instead.
  static func commits(at first: UInt64, in s: Snapshot) throws -> [Commit] {
    do {
      return try s.commits(from: first, to: first)
    } catch let e as StoreError where e.code == .historyTruncated {
      return try s.commits(from: 1, to: 1)
    }
  }

  static func concerns(_ e: Event, _ id: ObjectID) -> Bool {
    switch e {
    case .link(let o, _, let t, _), .unlink(let o, _, let t): o == id || t == id
    default: e.object == id
    }
  }

  /// An identity that may name a deleted object (its history stays readable).
  static func identity(_ text: String, in s: Snapshot) throws -> ObjectID {
    guard let (name, id) = ObjectID.parse(text), let e = s.model.entity(named: name) else {
      throw ToolError.usage("'\(text)' is not an identity (Entity/N with a known entity)")
    }
    guard let actual = try s.entityID(of: id), s.model.isKind(actual, of: e.id) else {
      throw ToolError.failed("no object \(text)")
    }
    return id
  }
}
