import EventGraph

struct ShowCommand: ToolCommand {
  let spec = CommandSpec(
    name: "show", abstract: "Show one object: its attributes and relationships.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ID", help: "The object's identity, Entity/N."),
    ],
    options: [
      OptionSpec("at", valueName: "SEQ", help: "The object as it was after event SEQ (time travel)."),
      OptionSpec("json", help: "Print the object as its export line."),
    ],
    examples: ["eventtool show book.store AddressBook/1", "eventtool show book.store AddressBook/1 --at 3 --json"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let text = try a.required("ID")
    let at = try a.sequence("at")
    let store = try openStore(try a.required("STORE"))
    try store.read { s in
      let record: ObjectRecord
      if let at {
        let end = try s.logEnd().sequence
        guard at <= end else { throw StoreError.sequenceBeyondLog(at, last: end) }
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
