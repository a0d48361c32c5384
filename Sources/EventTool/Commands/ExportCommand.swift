import EventGraph

struct ExportCommand: ToolCommand {
  let spec = CommandSpec(
    name: "export", abstract: "Write every object as JSON Lines, sorted by identity.",
    discussion: """
      Importing the output into an empty store and exporting again gives the same text. --at-commit N exports \
      the objects as commit N left them; --at SEQ as they were after event SEQ, which must be the last event of \
      its commit.
      """,
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: TimePoint.options + [
      OptionSpec("entity", valueName: "NAME", help: "Only objects of this entity (and its sub-entities).")
    ],
    examples: [
      "eventtool export book.store > book.jsonl", "eventtool export book.store --entity PhoneBook --at-commit 2",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let point = try TimePoint.parse(a)
    let store = try openStore(try a.required("STORE"))
    let at = try point?.sequence(in: store)
    try store.export(entity: a.value("entity"), asOf: at) { io.print($0) }
  }
}
