import EventGraph
import Foundation

struct DemoCommand: ToolCommand {
  let spec = CommandSpec(
    name: "demo", abstract: "Run the seed scenario end to end in a fresh directory, printing each step's command.",
    discussion: """
      Builds the first seed's v1 address book (桃太郎 with a landline and a mobile, 浦島太郎 with a mobile \
      only, 一寸法師 with none), then shows its log and state. Every step is printed as the eventtool \
      command that does it, followed by that command's output.
      """,
    positionals: [PositionalSpec("DIR", help: "A directory to work in (must not exist or be empty); a temporary one by default.", isOptional: true)],
    examples: ["eventtool demo", "eventtool demo /tmp/eventgraph-demo"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let fm = FileManager.default
    let dir = a.positional("DIR") ?? fm.temporaryDirectory.appendingPathComponent("eventgraph-demo-\(UUID().uuidString.prefix(8))").path
    if fm.fileExists(atPath: dir), !((try? fm.contentsOfDirectory(atPath: dir))?.isEmpty ?? false) {
      throw ToolError.failed("\(dir) is not empty: the demo needs a fresh directory")
    }
    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let demo = DemoRunner(dir: dir, io: io)
    try demo.write("AddressBook.v1.model.json", DemoFiles.addressBookV1)
    try demo.write("people.jsonl", DemoFiles.people)
    let store = dir + "/book.store"

    demo.step("1. Create a store with the seed's v1 model (AddressBook with phone1 = landline, phone2 = mobile).")
    try demo.run(["init", store, "--model", dir + "/AddressBook.v1.model.json"])
    demo.step("2. Append the three people, one commit each (the events file is shown first).")
    io.print(DemoFiles.people)
    try demo.run(["append", store, dir + "/people.jsonl"])
    demo.step("3. The log: every insert and attribute change is an event.")
    try demo.run(["log", store])
    demo.step("4. The current state, exported as JSON Lines.")
    try demo.run(["export", store])
    demo.step("5. 桃太郎 changes his mobile number: one more commit; the log keeps the old value.")
    try demo.write("change.jsonl", DemoFiles.change)
    io.print(DemoFiles.change)
    try demo.run(["append", store, dir + "/change.jsonl"])
    try demo.run(["show", store, "AddressBook/1"])
    try demo.run(["show", store, "AddressBook/1", "--at", "5"])
    demo.step("6. Replaying the log reproduces the state byte for byte.")
    try demo.run(["verify", store])
    try demo.run(["stats", store])
    io.print("\nThe store is in \(store): an ordinary LMDB environment (try 'mdb_stat -a \(store)').")
  }
}

/// Runs the demo's steps through the tool itself, so what it prints is what a user would see.
struct DemoRunner {
  let dir: String
  let io: ToolIO

  func step(_ text: String) { io.print("\n== \(text)") }

  func write(_ name: String, _ text: String) throws {
    try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
  }

  func run(_ arguments: [String]) throws {
    io.print("$ eventtool " + arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " "))
    let status = EventTool().run(arguments, io: io)
    if status != 0 { throw ToolError.failed("the demo step 'eventtool \(arguments.joined(separator: " "))' failed") }
  }
}

/// The seed's files, embedded so the demo needs nothing but the binary.
enum DemoFiles {
  static let addressBookV1 = """
    {
      "name": "AddressBook",
      "version": 1,
      "entities": [
        {
          "name": "AddressBook",
          "attributes": [
            {"name": "firstName", "type": "string"},
            {"name": "lastName", "type": "string"},
            {"name": "phone1", "type": "string", "optional": true},
            {"name": "phone2", "type": "string", "optional": true}
          ]
        }
      ]
    }

    """

  static let people = """
    {"commit": "momotaro", "type": "insert", "object": "$momo", "entity": "AddressBook"}
    {"commit": "momotaro", "type": "set", "object": "$momo", "key": "firstName", "value": "桃"}
    {"commit": "momotaro", "type": "set", "object": "$momo", "key": "lastName", "value": "太郎"}
    {"commit": "momotaro", "type": "set", "object": "$momo", "key": "phone1", "value": "123-4567-7891"}
    {"commit": "momotaro", "type": "set", "object": "$momo", "key": "phone2", "value": "090-111-9999"}
    {"commit": "urashima", "type": "insert", "object": "$ura", "entity": "AddressBook"}
    {"commit": "urashima", "type": "set", "object": "$ura", "key": "firstName", "value": "浦島"}
    {"commit": "urashima", "type": "set", "object": "$ura", "key": "lastName", "value": "太郎"}
    {"commit": "urashima", "type": "set", "object": "$ura", "key": "phone2", "value": "090-1234-5678"}
    {"commit": "issun", "type": "insert", "object": "$issun", "entity": "AddressBook"}
    {"commit": "issun", "type": "set", "object": "$issun", "key": "firstName", "value": "一寸"}
    {"commit": "issun", "type": "set", "object": "$issun", "key": "lastName", "value": "法師"}

    """

  static let change = """
    {"commit": "new-mobile", "type": "set", "object": "AddressBook/1", "key": "phone2", "value": "080-2222-3333"}

    """
}
