import EventGraph
internal import EventGraphText

struct AppendCommand: ToolCommand {
  let spec = CommandSpec(
    name: "append", abstract: "Append events from a JSON Lines file; each commit label is one atomic commit.",
    discussion: """
      Lines have the shape of 'log --json' without seq and time. Consecutive lines with the same "commit" \
      label form one commit. Inserted objects are named by placeholders starting with '$'. The first line of \
      a commit may carry "idempotencyKey": "..." (a commit whose key is already in the store is skipped and \
      reported as a duplicate, so a rerun after a kill lands each commit once) and "expect": \
      {"Entity/N": version} or {"logEnd": sequence} (the commit is refused unless they still hold). Each commit \
      is reported on its own line as soon as it is durable. Stops at the first refused commit, says which line \
      and why, and keeps the earlier commits.
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
    ],
    options: [
      OptionSpec(
        "json", help: "Print a JSON object per commit as it lands, then the whole result as one JSON object.")
    ],
    examples: ["eventtool append book.store changes.jsonl", "eventtool append book.store - --json < changes.jsonl"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let file = try a.required("FILE")
    let json = a.flag("json")
    let input = try io.lines(file)
    let result: AppendResult
    do {
      // Each commit is printed once durable, before the next is read: a killed run has
      // acknowledged exactly the commits that landed.
      result = try store.append(from: input) { c in
        io.print(json ? Self.json(c, store).serialized() : Self.text(c, store))
      }
    } catch {
      throw ToolError.failed("\(inputName(file)): \(ToolHints.message(error))")
    }
    if json { io.print(Self.summary(result, store).serialized()) }
    if let f = result.failure { throw ToolError.failed("\(inputName(file)): \(f)") }
  }

  /// A commit's lines without `--json`: its sequences, then its placeholders.
  static func text(_ c: AppendedCommit, _ store: EventStore) -> String {
    var lines: [String]
    switch (c.commit, c.isDuplicate) {
    case (let info?, true):
      lines = [
        "commit '\(c.label)': already committed (commit \(info.number), sequences \(info.firstSequence)...\(info.lastSequence)), skipped"
      ]
    case (let info?, false): lines = ["commit '\(c.label)': sequences \(info.firstSequence)...\(info.lastSequence)"]
    case (nil, _): lines = ["commit '\(c.label)': no change"]
    }
    for (name, id) in c.placeholders { lines.append("\(name) = \(store.model.display(id, in: store))") }
    return lines.joined(separator: "\n")
  }

  /// A commit's JSON Lines object with `--json`.
  static func json(_ c: AppendedCommit, _ store: EventStore) -> JSON {
    .object(
      sequences(c) + [
        JSONField("duplicate", .bool(c.isDuplicate)),
        JSONField("placeholders", placeholders(c.placeholders, store)),
      ])
  }

  /// The last line with `--json`: the whole result, as the command printed it before it
  /// printed each commit.
  static func summary(_ result: AppendResult, _ store: EventStore) -> JSON {
    let commits: [JSON] = result.commits.map { c in
      .object(sequences(c) + (c.isDuplicate ? [JSONField("duplicate", .bool(true))] : []))
    }
    var fields = [
      JSONField("commits", .array(commits)), JSONField("placeholders", placeholders(result.placeholders, store)),
    ]
    if let f = result.failure { fields.append(JSONField("error", .string(f.description))) }
    if let conflict = result.conflict {
      let subject: JSONField =
        switch conflict.subject {
        case .object(_, let name): JSONField("object", .string(name))
        case .log: JSONField("logEnd", .bool(true))
        }
      fields.append(
        JSONField(
          "conflict",
          .object([
            subject, JSONField("expected", .int(Int64(conflict.expected))),
            JSONField("actual", .int(Int64(conflict.actual))),
          ])))
    }
    return .object(fields)
  }

  private static func sequences(_ c: AppendedCommit) -> [JSONField] {
    [
      JSONField("commit", .string(c.label)),
      JSONField("seq", c.commit.map { .int(Int64($0.firstSequence)) } ?? .null),
      JSONField("lastSeq", c.commit.map { .int(Int64($0.lastSequence)) } ?? .null),
    ]
  }

  private static func placeholders(_ list: [(name: String, id: ObjectID)], _ store: EventStore) -> JSON {
    .object(list.map { JSONField($0.name, .string(store.model.display($0.id, in: store))) })
  }
}

extension Model {
  /// `Entity/N` for an object of `store`.
  func display(_ id: ObjectID, in store: EventStore) -> String {
    (try? store.read { $0.display(id) }) ?? "#\(id.rawValue)"
  }
}
