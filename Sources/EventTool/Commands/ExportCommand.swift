import EventGraph

struct ExportCommand: ToolCommand {
  let spec = CommandSpec(
    name: "export", abstract: "Write every object as JSON Lines, sorted by identity.",
    discussion: "Importing the output into an empty store and exporting again gives the same text.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("at", valueName: "SEQ", help: "The objects as they were after event SEQ."),
      OptionSpec("entity", valueName: "NAME", help: "Only objects of this entity (and its sub-entities)."),
    ],
    examples: ["eventtool export book.store > book.jsonl", "eventtool export book.store --entity PhoneBook --at 12"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let at = try a.sequence("at")
    let store = try openStore(try a.required("STORE"))
    try store.export(entity: a.value("entity"), asOf: at) { io.print($0) }
  }
}
