import EventGraph

struct ShowCommand: ToolCommand {
  let spec = CommandSpec(
    name: "show", abstract: "Show one object: its attributes and relationships.",
    discussion: """
      --at-commit N shows the object as commit N left it; --at SEQ as it was after event SEQ, which must be the \
      last event of its commit: no state inside a commit was ever committed.
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ID", help: "The object's identity, Entity/N."),
    ],
    options: TimePoint.options + [OptionSpec("json", help: "Print the object as its export line."), readVersionOption],
    examples: [
      "eventtool show book.store AddressBook/1", "eventtool show book.store AddressBook/1 --at-commit 2 --json",
      "eventtool show book.store AddressBook/1 --at 12", "eventtool show book.store PhoneBook/7 --version 2",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let point = try TimePoint.parse(a)
    let text = try a.required("ID")
    let store = try openStore(try a.required("STORE"))
    try read(store, a) { s in
      let at = try point?.sequence(in: s)
      let record: ObjectRecord
      if let at {
        let id = try LogCommand.identity(text, in: s)
        guard let v = try s.object(id, asOf: at) else {
          throw ToolError.failed("\(text) did not exist after event \(at)")
        }
        record = try s.exportRecord(v)
      } else {
        record = try s.record(try s.resolve(text))
      }
      if a.flag("json") {
        io.print(record.jsonText)
        return
      }
      io.print("\(record.id)" + (at.map { "  (as of event \($0))" } ?? ""))
      for (name, value) in record.attributes { io.print("  \(name) = \(value.displayText)") }
      for r in record.relationships {
        io.print(
          "  \(r.name) -> " + (r.toMany ? "[" + r.targets.joined(separator: ", ") + "]" : r.targets.first ?? "nil"))
      }
    }
  }
}
