import Foundation

/// Building cases in one line each.
extension BadInput {
  static func bad(
    _ status: Int32, _ arguments: [String], _ names: [String], fixture: Fixture = .book,
    files: [String: FileKind] = [:],
    input: String? = nil, access: Access = .owner, absent: [String] = []
  ) -> BadInput {
    BadInput(
      arguments: arguments, status: status, names: names, fixture: fixture, files: files, input: input, access: access,
      absent: absent)
  }

  /// A model file with these entities.
  static func model(_ entities: String, version: Int = 1) -> FileKind {
    .text(#"{"name": "M", "version": \#(version), "entities": [\#(entities)]}"#)
  }

  /// An entity of a model file.
  static func entity(_ name: String, attributes: String = "", relationships: String = "", extra: String = "") -> String
  {
    #"{"name": "\#(name)", "attributes": [\#(attributes)], "relationships": [\#(relationships)]\#(extra)}"#
  }

  static let name = #"{"name": "name", "type": "string"}"#
  static let garbage: FileKind = .bytes([0x00, 0xFF, 0xFE, 0x13, 0x37, 0x80, 0x81, 0x0A])
  /// Invalid UTF-8 inside a JSON string.
  static let invalidUTF8: FileKind = .bytes(Array(#"{"name": "M\#u{1}"#.utf8.dropLast()) + [0xC3, 0x28, 0x22, 0x7D])
}

// MARK: - Files: init, import, append, diagram; and the command line itself

extension BadInput {
  static let fileCases: [BadInput] = commandLineCases + initCases + importCases + appendCases + diagramCases

  static let commandLineCases: [BadInput] = [
    bad(2, [], ["missing command"]),
    bad(2, ["improt", "@S", "x"], ["improt", "import"]),
    bad(2, ["help", "nope"], ["nope"]),
    bad(2, ["reference", "extra"], ["extra"]),
    bad(2, ["reference", "--bash"], ["--bash"]),
    bad(1, ["demo", "@D/file"], ["@D/file"], files: ["file": .text("x")]),
    bad(
      1, ["demo", "@D/locked/new"], ["@D/locked/new", "permission denied"], files: ["locked": .lockedDirectory],
      access: .otherUser, absent: ["@D/locked/new"]),
    bad(1, ["demo", "@S"], ["@S", "not empty"]),
    bad(2, ["demo", "@D/new", "extra"], ["extra"], absent: ["@D/new"]),
    bad(2, ["demo", "@D/new", "--fast"], ["--fast"], absent: ["@D/new"]),
    bad(2, ["stats", "@S", "--json=yes"], ["--json"]),
  ]

  static let initCases: [BadInput] = {
    func initWith(_ file: FileKind, _ names: [String], name: String = "m.model.json") -> BadInput {
      bad(
        1, ["init", "@D/new", "--model", "@D/\(name)"], ["@D/\(name)"] + names, files: [name: file],
        absent: ["@D/new"])
    }
    let person = entity("Person", attributes: name)
    return [
      bad(2, ["init"], ["STORE"]),
      bad(2, ["init", "@D/new"], ["--model"], absent: ["@D/new"]),
      bad(2, ["init", "@D/new", "--model"], ["--model"], absent: ["@D/new"]),
      bad(2, ["init", "@D/new", "--model", "@X/AddressBook.v1.model.json", "--modle", "x"], ["--modle"]),
      bad(2, ["init", "@D/new", "@D/other2", "--model", "@X/AddressBook.v1.model.json"], ["@D/other2"]),
      bad(
        1, ["init", "@D/new", "--model", "@D/missing.json"], ["@D/missing.json", "no such file"], absent: ["@D/new"]),
      bad(1, ["init", "@D/new", "--model", "@D"], ["@D", "directory"], absent: ["@D/new"]),
      bad(1, ["init", "@S", "--model", "@X/AddressBook.v1.model.json"], ["@S", "already holds a store"]),
      bad(1, ["init", "@D/file", "--model", "@X/AddressBook.v1.model.json"], ["@D/file"], files: ["file": .text("x")]),
      initWith(.fifo, ["FIFO"]),
      initWith(.text(""), ["line 1"]),
      initWith(garbage, ["line 1, column 1"]),
      initWith(invalidUTF8, ["line 1"]),
      initWith(.text("{\n  \"name\": \"M\",\n  \"version\": 1,,\n}"), ["line 3"]),
      initWith(model(""), ["entities", "at least one entity"]),
      initWith(.text(#"{"name": "M", "version": 1, "entities": [], "extra": 1}"#), ["extra"]),
      initWith(model(person, version: 0), ["version"]),
      initWith(.text(#"{"name": "M", "version": "one", "entities": [\#(person)]}"#), ["version"]),
      initWith(.text(#"{"version": 1, "entities": [\#(person)]}"#), ["name"]),
      initWith(model(entity("Person", attributes: #"{"name": "n", "type": "strin"}"#)), ["Person.n", "strin"]),
      initWith(model(entity("Person", attributes: #"{"name": "n", "type": "string", "colour": 1}"#)), ["colour"]),
      initWith(model(person + ", " + person), ["Person", "twice"]),
      initWith(model(entity("Person", attributes: name + ", " + name)), ["Person.name"]),
      initWith(model(entity("1Person")), ["1Person"]),
      initWith(model(entity("Person", attributes: #"{"name": "my-name", "type": "string"}"#)), ["my-name"]),
      initWith(
        model(entity("Person", relationships: #"{"name": "pet", "destination": "Dog"}"#)), ["Person.pet", "Dog"]),
      initWith(
        model(
          entity("Person", relationships: #"{"name": "pet", "destination": "Person", "inverse": "owner"}"#)),
        ["Person.pet", "owner"]),
      initWith(
        model(entity("Person", relationships: #"{"name": "pets", "destination": "Person", "ordered": true}"#)),
        ["Person.pets", "ordered"]),
      initWith(
        model(
          entity(
            "Person",
            relationships: #"{"name": "pets", "destination": "Person", "toMany": true, "minCount": 3, "maxCount": 1}"#
          )), ["Person.pets"]),
      initWith(
        model(entity("Person", relationships: #"{"name": "pet", "destination": "Person", "deleteRule": "explode"}"#)),
        ["Person.pet", "explode"]),
      initWith(
        model(entity("Person", relationships: #"{"name": "pet", "destination": "Person", "copy": "clone"}"#)),
        ["Person.pet", "clone"]),
      initWith(model(entity("Person", extra: #", "parent": "Animal""#)), ["Person", "Animal"]),
      initWith(
        model(entity("A", extra: #", "parent": "B""#) + ", " + entity("B", extra: #", "parent": "A""#)), ["cycle"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "age", "type": "int16", "default": "old"}"#)), ["Person.age"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "age", "type": "int16", "default": 70000}"#)), ["Person.age"]),
      // The keys of Core Data's validation, transformable, transient and userInfo.
      initWith(
        model(entity("Person", attributes: #"{"name": "age", "type": "int16", "minValue": 70000}"#)),
        ["Person.age", "minValue", "does not fit int16"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "age", "type": "int16", "minValue": 9, "maxValue": 1}"#)),
        ["Person.age", "minValue 9 exceeds maxValue 1"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "minValue": "a"}"#)),
        ["Person.n", "minValue needs a number or date"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "maxLength": -2}"#)),
        ["Person.n", "maxLength is negative"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "boolean", "maxLength": 2}"#)),
        ["Person.n", "maxLength"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "regularExpression": "(a"}"#)),
        ["Person.n", "regularExpression '(a' does not compile"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "transformer": "T"}"#)),
        ["Person.n", "transformer"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "transient": "yes"}"#)),
        ["transient", "true or false"]),
      initWith(
        model(entity("Person", attributes: #"{"name": "n", "type": "string", "default": "", "minLength": 1}"#)),
        ["Person.n", "invalid default", "minLength 1"]),
      initWith(model(entity("Person", attributes: name, extra: #", "userInfo": {"a": 1}"#)), ["userInfo", "'a'"]),
      initWith(
        model(entity("Person", attributes: name, extra: #", "uniquenessConstraints": [["nmae"]]"#)),
        ["Person", "uniquenessConstraints", "nmae"]),
      initWith(
        model(entity("Person", attributes: name, extra: #", "uniquenessConstraints": "name""#)),
        ["uniquenessConstraints", "must be an array"]),
      bad(
        1, ["init", "@D/new", "--model", "@D/secret.json"], ["@D/secret.json", "permission denied"],
        files: ["secret.json": .unreadable("{}")], access: .otherUser, absent: ["@D/new"]),
      bad(
        1, ["init", "@D/locked/new", "--model", "@X/AddressBook.v1.model.json"],
        ["@D/locked/new", "permission denied"],
        files: ["locked": .lockedDirectory], access: .otherUser, absent: ["@D/locked/new"]),
    ]
  }()

  /// The faults import and append share.
  ///
  /// A JSON Lines file that is no file, cannot be read or is no text; a store they may not
  /// write. They assert the file only: these commands' messages are being reworded elsewhere.
  static func jsonLinesFaults(_ command: String) -> [BadInput] {
    let faults: [FileKind] = [.directory, .fifo, garbage, invalidUTF8]
    return faults.map { jsonLines(command, $0) } + [
      bad(1, [command, "@S", "/tmp"], ["/tmp"]),
      bad(1, [command, "@S", "@D/missing.jsonl"], ["@D/missing.jsonl"]),
      bad(2, [command, "@S"], ["FILE"]),
      bad(
        1, [command, "@S", "@D/secret.jsonl"], ["@D/secret.jsonl"], files: ["secret.jsonl": .unreadable("")],
        access: .otherUser),
      bad(
        1, [command, "@S", "@D/in.jsonl"], ["@S/data.mdb", "permission denied"], files: ["in.jsonl": .text("")],
        access: .readOnlyStore),
    ]
  }

  /// `command STORE @D/in.jsonl` with this file.
  static func jsonLines(_ command: String, _ file: FileKind) -> BadInput {
    bad(1, [command, "@S", "@D/in.jsonl"], ["@D/in.jsonl"], files: ["in.jsonl": file])
  }

  static let importCases: [BadInput] =
    jsonLinesFaults("import")
    + [
      .text(#"{"id": "a", "entity": "AddressBook", "attributes": {"firstName": "A", "lastName": "B"}}"# + "\n{nope\n"),
      .text(#"{"id": "a", "entity": "Nope"}"#),
      .text(#"{"id": "a", "entity": "AddressBook", "attributes": {"nickname": "A"}}"#),
      .text(#"{"id": "a", "entity": "AddressBook", "attributes": {"firstName": 7, "lastName": "B"}}"#),
      .text(
        #"{"id": "a", "entity": "AddressBook", "attributes": {"firstName": "A", "lastName": "B"}, "relationships": {"phones": ["zz"]}}"#
      ),
      .text(#"[1, 2, 3]"#),
    ].map { jsonLines("import", $0) } + [
      // A commit the store refuses is reported without the file (ImportCommand prefixes it to
      // format errors only): the property is what this case can assert.
      bad(
        1, ["import", "@S", "@D/in.jsonl"], ["lastName"],
        files: ["in.jsonl": .text(#"{"id": "a", "entity": "AddressBook", "attributes": {"firstName": "A"}}"#)]),
      // A number that does not fit its attribute's type, in a store of the company model.
      bad(
        1, ["import", "@S", "@D/in.jsonl"], ["salary", "does not fit decimal"], fixture: .company,
        files: ["in.jsonl": .text(#"{"id": "e", "entity": "Employee", "attributes": {"name": "E", "salary": 1e200}}"#)]),
      bad(1, ["import", "@S", "@D"], ["@D"]),
      bad(1, ["import", "@S", "-"], ["standard input"], input: "{\"id\": 1}\n"),
      bad(2, ["import", "@S", "@D/in.jsonl", "--batch", "0"], ["--batch"], files: ["in.jsonl": .text("")]),
      bad(2, ["import", "@S", "@D/in.jsonl", "--batch", "many"], ["--batch", "many"], files: ["in.jsonl": .text("")]),
      bad(1, ["import", "@D", "@X/AddressBook.v1.model.json"], ["@D"]),
    ]

  static let appendCases: [BadInput] =
    jsonLinesFaults("append")
    + [
      #"{"commit": "c1", "type": "insert", "object": "$a", "entity": "Nope"}"#,
      #"{"commit": "c1", "type": "explode", "object": "AddressBook/1"}"#,
      #"{"commit": "c1", "type": "set", "object": "AddressBook/1", "key": "nope", "value": 1}"#,
      #"{"commit": "c1", "type": "set", "object": "AddressBook/1", "key": "firstName", "value": 1}"#,
      #"{"commit": "c1", "type": "set", "object": "Nope/1", "key": "firstName", "value": "x"}"#,
      #"{"commit": "c1", "type": "set", "object": "$never", "key": "firstName", "value": "x"}"#,
      #"{"commit": "c1", "type": "delete", "object": "AddressBook/99"}"#,
      #"{"type": "delete", "object": "AddressBook/1"}"#,
      "{\"commit\": \"c1\", \"type\": \"set\",\n",
    ].map { jsonLines("append", .text($0)) } + [
      bad(1, ["append", "@S", "-"], ["standard input"], input: "not json\n"),
      bad(2, ["append", "@S", "@D/in.jsonl", "--jsn"], ["--jsn"], files: ["in.jsonl": .text("")]),
    ]

  static let diagramCases: [BadInput] = [
    bad(2, ["diagram"], ["SOURCE"]),
    bad(1, ["diagram", "@D/missing.model.json"], ["@D/missing.model.json", "no such file"]),
    bad(1, ["diagram", "@D/m.json"], ["@D/m.json", "line 1"], files: ["m.json": garbage]),
    bad(1, ["diagram", "@D/m.json"], ["@D/m.json", "entities"], files: ["m.json": model("")]),
    bad(1, ["diagram", "@D/m.json"], ["@D/m.json", "FIFO"], files: ["m.json": .fifo]),
    bad(1, ["diagram", "@D"], ["@D", "not an EventGraph store"]),
    bad(1, ["diagram", "@S", "--mapping", "@D/missing.json"], ["@D/missing.json"]),
    bad(1, ["diagram", "@S", "--mapping", "@D/map.json"], ["@D/map.json", "line 1"], files: ["map.json": .text("")]),
    bad(1, ["diagram", "@S", "--mapping", "@X/AddressBook.v2-v3.mapping.json"], ["--model", "3"]),
    bad(1, ["diagram", "@S", "--mapping", "@X/AddressBook.v2-v3.mapping.json", "--model", "@D"], ["@D", "directory"]),
    bad(2, ["diagram", "@S", "--mapping"], ["--mapping"]),
    bad(
      1, ["diagram", "@D/secret.json"], ["@D/secret.json", "permission denied"],
      files: ["secret.json": .unreadable("{}")], access: .otherUser),
    bad(1, ["diagram", "@S"], ["@S", "permission denied"], access: .unsearchableStore),
  ]
}
