import EventGraph
internal import EventGraphText

struct AppendCommand: ToolCommand {
  let spec = CommandSpec(
    name: "append", abstract: "Append events from a JSON Lines file; each commit label is one atomic commit.",
    discussion: """
      Lines have the shape of 'log --json' without seq and time. Consecutive lines with the same "commit" \
      label form one commit. Inserted objects are named by placeholders starting with '$'. Stops at the \
      first refused commit, says which line and why, and keeps the earlier commits.
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
    ],
    options: [OptionSpec("json", help: "Print the result as JSON.")],
    examples: ["eventtool append book.store changes.jsonl", "eventtool append book.store - --json < changes.jsonl"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let file = try a.required("FILE")
    let name = file == "-" ? "standard input" : file
    let result: AppendResult
    do {
      result = try store.append(try io.read(file))
    } catch let e as FormatError {
      throw ToolError.failed("\(name): \(e)")
    }
    if a.flag("json") {
      let commits: [JSON] = result.commits.map { c in
        .object([
          JSONField("commit", .string(c.label)),
          JSONField("seq", c.commit.map { .int(Int64($0.firstSequence)) } ?? .null),
          JSONField("lastSeq", c.commit.map { .int(Int64($0.lastSequence)) } ?? .null),
        ])
      }
      var fields = [
        JSONField("commits", .array(commits)),
        JSONField(
          "placeholders",
          .object(result.placeholders.map { JSONField($0.name, .string(store.model.display($0.id, in: store))) })),
      ]
      if let f = result.failure { fields.append(JSONField("error", .string(f.description))) }
      io.print(JSON.object(fields).serialized())
    } else {
      for c in result.commits {
        io.print(
          c.commit.map { "commit '\(c.label)': sequences \($0.firstSequence)...\($0.lastSequence)" }
            ?? "commit '\(c.label)': no change")
      }
      for (name, id) in result.placeholders { io.print("\(name) = \(store.model.display(id, in: store))") }
    }
    if let f = result.failure { throw ToolError.failed("\(name): \(f)") }
  }
}

extension Model {
  /// `Entity/N` for an object of `store`.
  func display(_ id: ObjectID, in store: EventStore) -> String {
    (try? store.read { $0.display(id) }) ?? "#\(id.rawValue)"
  }
}
