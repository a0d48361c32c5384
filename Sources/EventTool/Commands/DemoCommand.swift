import EventGraph
import Foundation

struct DemoCommand: ToolCommand {
  let spec = CommandSpec(
    name: "demo", abstract: "Run the seed scenario end to end in a fresh directory, printing each step's command.",
    discussion: """
      Builds the first seed's v1 address book (桃太郎 with a landline and a mobile, 浦島太郎 with a mobile \
      only, 一寸法師 with none), shows its log and state, upcasts it to v2 with the seed's phone split, \
      prints the PhoneBook list, follows an object's history across the version bump, and rolls back \
      and forward. Every step is printed as the eventtool command that does it, followed by its output.
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
    demo.step("5. 一寸法師 gets a landline, then gives it up: two more commits; the log keeps both.")
    try demo.write("changes.jsonl", DemoFiles.changes)
    io.print(DemoFiles.changes)
    try demo.run(["append", store, dir + "/changes.jsonl"])
    try demo.run(["show", store, "AddressBook/3"])
    try demo.run(["show", store, "AddressBook/3", "--at", "13"])
    demo.step("6. Replaying the log reproduces the state byte for byte.")
    try demo.run(["verify", store])

    demo.step("7. Version 2 of the model: phone1/phone2 become PhoneBook objects (the seed's migration).")
    try demo.write("AddressBook.v2.model.json", DemoFiles.addressBookV2)
    try demo.write("AddressBook.v1-v2.mapping.json", DemoFiles.mapping)
    io.print(DemoFiles.mapping)
    try demo.run(["upcast", store, "--model", dir + "/AddressBook.v2.model.json", "--mapping", dir + "/AddressBook.v1-v2.mapping.json", "--dry-run"])
    try demo.run(["upcast", store, "--model", dir + "/AddressBook.v2.model.json", "--mapping", dir + "/AddressBook.v1-v2.mapping.json"])
    demo.step("8. The PhoneBook list, printed the way the seed's post printed it (each phone's addressBook is its inverse):")
    try demo.run(["export", store, "--entity", "PhoneBook"])
    for line in try DemoRunner.phoneList(store) { io.print(line) }
    demo.step("9. History survives the version bump: 一寸法師's commits, as v2 events (each from its v1 commit).")
    try demo.run(["log", store, "--object", "AddressBook/3"])
    try demo.run(["verify", store])
    demo.step("10. Roll back to v1 (its log was kept) and forward again.")
    try demo.run(["rollback", store])
    try demo.run(["show", store, "AddressBook/1"])
    try demo.run(["rollback", store, "--to", "2"])
    try demo.run(["show", store, "AddressBook/1"])
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

  /// "浦島 太郎 :Tel 090-1234-5678": each PhoneBook with its owner, as the seed printed them.
  static func phoneList(_ path: String) throws -> [String] {
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    return try store.read { s in
      try s.objects(of: "PhoneBook").map { p in
        let owner = try s.related(p, "addressBook").first
        let first = try owner.flatMap { try s.value($0, "firstName")?.stringValue } ?? "?"
        let last = try owner.flatMap { try s.value($0, "lastName")?.stringValue } ?? "?"
        return "\(first) \(last) :Tel \(try s.value(p, "phoneNumber")?.stringValue ?? "?")"
      }
    }
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

  static let changes = """
    {"commit": "landline", "type": "set", "object": "AddressBook/3", "key": "phone1", "value": "0120-000-111"}
    {"commit": "no-landline", "type": "set", "object": "AddressBook/3", "key": "phone1", "value": null}

    """

  static let addressBookV2 = """
    {
      "name": "AddressBook",
      "version": 2,
      "entities": [
        {
          "name": "AddressBook",
          "attributes": [
            {"name": "firstName", "type": "string"},
            {"name": "lastName", "type": "string"}
          ],
          "relationships": [
            {"name": "phones", "destination": "PhoneBook", "toMany": true, "inverse": "addressBook", "deleteRule": "cascade"}
          ]
        },
        {
          "name": "PhoneBook",
          "attributes": [
            {"name": "phoneNumber", "type": "string"},
            {"name": "type", "type": "int16", "default": 0}
          ],
          "relationships": [
            {"name": "addressBook", "destination": "AddressBook", "optional": true, "inverse": "phones", "deleteRule": "nullify"}
          ]
        }
      ]
    }

    """

  static let mapping = """
    {
      "source": 1,
      "destination": 2,
      "entityMappings": [
        {"name": "AddressBookToAddressBook", "source": "AddressBook", "destination": "AddressBook",
         "attributes": {"firstName": "$source.firstName", "lastName": "$source.lastName"},
         "relationships": {"phones": {"mapping": "AddressBookToPhoneBook", "sources": "$source"}}},
        {"name": "AddressBookToPhoneBook", "source": "AddressBook", "destination": "PhoneBook",
         "filter": "phone1 != nil || phone2 != nil",
         "instances": [
           {"key": "landline", "when": "phone1 != nil AND phone1 != ''",
            "attributes": {"phoneNumber": "$source.phone1", "type": "1"}},
           {"key": "mobile", "when": "phone2 != nil AND phone2 != ''",
            "attributes": {"phoneNumber": "$source.phone2", "type": "2"}}
         ]}
      ]
    }

    """
}
