import EventGraph
import Foundation

struct DemoCommand: ToolCommand {
  let spec = CommandSpec(
    name: "demo", abstract: "Run the seed scenario end to end in a fresh directory, printing each step's command.",
    discussion: """
      Builds the first seed's v1 address book (桃太郎 with a landline and a mobile, 浦島太郎 with a mobile \
      only, 一寸法師 with none), shows its log and state, upcasts it to v2 with the seed's phone split, \
      prints the PhoneBook list, follows an object's history across the version bump, and rolls back \
      and forward; then the second seed: a company with ordered employees and its deep copy. Every step \
      is printed as the eventtool command that does it, followed by its output. With --coredata, the seed's \
      story from its own Core Data files instead: both model versions, the v1 XML store and the mapping model \
      imported, the upcast with the phone split, the PhoneBook list.
      """,
    positionals: [
      PositionalSpec(
        "DIR", help: "A directory to work in (must not exist or be empty); a temporary one by default.",
        isOptional: true)
    ],
    options: [
      OptionSpec("coredata", help: "Run the seed's story from its Core Data files (model, XML store, mapping model)."),
      OptionSpec(
        "files", valueName: "DIR",
        help: "With --coredata: the seed's Core Data files (the repository's copy by default)."),
    ],
    examples: ["eventtool demo", "eventtool demo /tmp/eventgraph-demo", "eventtool demo --coredata"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let fm = FileManager.default
    let dir =
      a.positional("DIR")
      ?? fm.temporaryDirectory.appendingPathComponent("eventgraph-demo-\(UUID().uuidString.prefix(8))").path
    if fm.fileExists(atPath: dir), !((try? fm.contentsOfDirectory(atPath: dir))?.isEmpty ?? false) {
      throw ToolError.failed("\(dir) is not empty: the demo needs a fresh directory")
    }
    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let demo = DemoRunner(dir: dir, io: io)
    if a.flag("coredata") {
      try CoreDataDemo.run(demo, files: a.value("files") ?? CoreDataDemo.defaultFiles)
      return
    }
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
    try demo.run([
      "upcast", store, "--model", dir + "/AddressBook.v2.model.json", "--mapping",
      dir + "/AddressBook.v1-v2.mapping.json", "--dry-run",
    ])
    try demo.run([
      "upcast", store, "--model", dir + "/AddressBook.v2.model.json", "--mapping",
      dir + "/AddressBook.v1-v2.mapping.json",
    ])
    demo.step(
      "8. The PhoneBook list, printed the way the seed's post printed it (each phone's addressBook is its inverse):")
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

    demo.step("11. The second seed: a company with ordered employees (each with a manager) and a shared department.")
    let company = dir + "/company.store"
    try demo.write("Company.model.json", DemoFiles.companyModel)
    try demo.write("company.jsonl", DemoFiles.company)
    try demo.run(["init", company, "--model", dir + "/Company.model.json"])
    io.print(DemoFiles.company)
    try demo.run(["import", company, dir + "/company.jsonl"])
    demo.step(
      "12. Its deep copy, by replaying the subgraph with fresh identities: employees copied in order, managers re-pointed inside the copy, the department referenced, not copied."
    )
    try demo.run(["clone", company, "Company/1", "--set", "Company.name=concat(name, ' (copy)')", "--json"])
    for line in try DemoRunner.companies(company) { io.print(line) }
    try demo.run(["verify", company])
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

  /// An argument as a shell would need it typed.
  static func shellQuoted(_ a: String) -> String {
    guard a.contains(where: { " '\"$()".contains($0) }) else { return a }
    if !a.contains("'") { return "'\(a)'" }
    return "\""
      + a.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "$", with: "\\$") + "\""
  }

  /// Each company beside its copy: its employees in order, each with its manager.
  static func companies(_ path: String) throws -> [String] {
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    return try store.read { s in
      try s.objects(of: "Company").map { c in
        let staff = try s.related(c, "employees").map { e in
          let manager = try s.related(e, "manager").first.map { " (manager \(s.display($0)))" } ?? ""
          return "\(s.display(e)) \(try s.value(e, "name")?.stringValue ?? "?")\(manager)"
        }
        let name = try s.value(c, "name")?.stringValue ?? "?"
        return "\(s.display(c)) \(name): " + staff.joined(separator: ", ")
      }
    }
  }

  func run(_ arguments: [String]) throws {
    io.print("$ eventtool " + arguments.map(Self.shellQuoted).joined(separator: " "))
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

  static let companyModel = """
    {
      "name": "Company",
      "version": 1,
      "entities": [
        {"name": "Company",
         "attributes": [{"name": "name", "type": "string", "indexed": true}],
         "relationships": [
           {"name": "employees", "destination": "Employee", "toMany": true, "ordered": true, "inverse": "company", "deleteRule": "cascade"},
           {"name": "departments", "destination": "Department", "toMany": true, "inverse": "companies"}]},
        {"name": "Employee",
         "attributes": [{"name": "name", "type": "string"}],
         "relationships": [
           {"name": "company", "destination": "Company", "inverse": "employees"},
           {"name": "manager", "destination": "Employee", "inverse": "reports"},
           {"name": "reports", "destination": "Employee", "toMany": true, "inverse": "manager"},
           {"name": "department", "destination": "Department", "inverse": "employees"}]},
        {"name": "Department",
         "attributes": [{"name": "name", "type": "string"}],
         "relationships": [
           {"name": "companies", "destination": "Company", "toMany": true, "inverse": "departments"},
           {"name": "employees", "destination": "Employee", "toMany": true, "inverse": "department", "deleteRule": "deny"}]}
      ]
    }

    """

  static let company = """
    {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["kintaro", "hanasaka", "kaguya"], "departments": ["rnd"]}}
    {"id": "kintaro", "entity": "Employee", "attributes": {"name": "金太郎"}, "relationships": {"department": "rnd"}}
    {"id": "hanasaka", "entity": "Employee", "attributes": {"name": "花咲爺"}, "relationships": {"manager": "kintaro", "department": "rnd"}}
    {"id": "kaguya", "entity": "Employee", "attributes": {"name": "かぐや姫"}, "relationships": {"manager": "hanasaka"}}
    {"id": "rnd", "entity": "Department", "attributes": {"name": "研究開発"}}

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
