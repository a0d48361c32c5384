import Foundation

// MARK: - Migrations: upcast and rollback

extension BadInput {
  static let migrationCases: [BadInput] = upcastCases + mappingCases + rollbackCases + followCases

  /// The company model renumbered: another model that happens to have a greater version.
  static let otherModel: FileKind = {
    let url = URL(fileURLWithPath: examples + "/Company.model.json")
    let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    return .text(text.replacingOccurrences(of: #""version": 1"#, with: #""version": 3"#))
  }()

  static let upcastCases: [BadInput] = {
    let v3 = "@X/AddressBook.v3.model.json"
    return [
      bad(2, ["upcast", "@S"], ["--model"]),
      bad(2, ["upcast", "@S", "--model"], ["--model"]),
      bad(1, ["upcast", "@S", "--model", "@D/missing.json"], ["@D/missing.json", "no such file"]),
      bad(1, ["upcast", "@S", "--model", "@D"], ["@D", "directory"]),
      bad(1, ["upcast", "@S", "--model", "@D/m.json"], ["@D/m.json", "line 1"], files: ["m.json": garbage]),
      bad(1, ["upcast", "@S", "--model", "@D/m.json"], ["@D/m.json", "FIFO"], files: ["m.json": .fifo]),
      bad(
        1, ["upcast", "@S", "--model", "@D/m.json"], ["@D/m.json", "at least one entity"],
        files: ["m.json": model("", version: 3)]),
      bad(1, ["upcast", "@S", "--model", "@X/AddressBook.v2.model.json"], ["already at version 2"]),
      bad(
        1, ["upcast", "@S", "--model", "@X/AddressBook.v1.model.json"],
        ["@X/AddressBook.v1.model.json", "not greater"]),
      bad(
        1, ["upcast", "@S", "--model", "@D/other.model.json"],
        ["@D/other.model.json", "shares no entity", "AddressBook, PhoneBook", "Company"],
        files: ["other.model.json": otherModel]),
      bad(
        1, ["upcast", "@S", "--model", "@D/other.model.json", "--dry-run"],
        ["@D/other.model.json", "shares no entity"],
        files: ["other.model.json": otherModel]),
      bad(2, ["upcast", "@S", "--model", v3, "--batch", "0"], ["--batch"]),
      bad(2, ["upcast", "@S", "--model", v3, "--batch", "-5"], ["--batch"]),
      bad(2, ["upcast", "@S", "--model", v3, "--batch", "lots"], ["--batch", "'lots'"]),
      bad(2, ["upcast", "@S", "--model", v3, "--dry"], ["--dry"]),
      bad(
        1, ["upcast", "@S", "--model", v3], ["@S/data.mdb", "permission denied", "writing"], access: .readOnlyStore),
      bad(1, ["upcast", "@S", "--model", v3], ["@S", "permission denied"], access: .unsearchableStore),
      bad(1, ["upcast", "@D/nowhere", "--model", v3], ["@D/nowhere"]),
    ]
  }()

  /// Mapping files from v2 to v3 with one fault each.
  static let mappingCases: [BadInput] = {
    func mapping(_ text: String, _ names: [String]) -> BadInput {
      bad(
        1, ["upcast", "@S", "--model", "@X/AddressBook.v3.model.json", "--mapping", "@D/v2-v3.mapping.json"],
        ["@D/v2-v3.mapping.json"] + names, files: ["v2-v3.mapping.json": .text(text)])
    }
    func entityMapping(_ body: String) -> String {
      #"{"source": 2, "destination": 3, "entityMappings": [{"name": "A", "source": "AddressBook", "destination": "AddressBook"\#(body)}]}"#
    }
    return [
      bad(
        1, ["upcast", "@S", "--model", "@X/AddressBook.v3.model.json", "--mapping", "@D/missing.json"],
        ["@D/missing.json"]),
      bad(
        1, ["upcast", "@S", "--model", "@X/AddressBook.v3.model.json", "--mapping", "@D"], ["@D", "directory"]),
      mapping("", ["line 1"]),
      mapping("{\n  \"source\": 2,\n  \"destination\": 3\n  \"entityMappings\": []\n}", ["line 4"]),
      mapping(#"{"source": 2, "destination": 3, "entityMappings": [], "extra": true}"#, ["extra"]),
      mapping(#"{"source": 1, "destination": 3, "entityMappings": []}"#, ["source", "version 1"]),
      mapping(#"{"source": 2, "destination": 4, "entityMappings": []}"#, ["destination", "version 4"]),
      mapping(#"{"source": "two", "destination": 3, "entityMappings": []}"#, ["source"]),
      mapping(
        #"{"source": 2, "destination": 3, "entityMappings": [{"name": "A", "source": "Nope", "destination": "AddressBook"}]}"#,
        ["A.source", "Nope"]),
      mapping(
        #"{"source": 2, "destination": 3, "entityMappings": [{"name": "A", "source": "AddressBook", "destination": "Nope"}]}"#,
        ["A.destination", "Nope"]),
      mapping(
        #"{"source": 2, "destination": 3, "entityMappings": [{"name": "A", "source": "AddressBook", "destination": "AddressBook"}, {"name": "A", "source": "PhoneBook", "destination": "PhoneBook"}]}"#,
        ["'A'", "twice"]),
      mapping(entityMapping(#", "attributes": {"nope": "$source.firstName"}"#), ["nope"]),
      mapping(entityMapping(#", "attributes": {"displayName": "$source.nope"}"#), ["nope"]),
      mapping(entityMapping(#", "attributes": {"displayName": "concat($source.firstName"}"#), ["displayName"]),
      mapping(entityMapping(#", "attributes": {"displayName": 3.5}"#), ["displayName"]),
      mapping(entityMapping(#", "attributes": {"displayName": ["a"]}"#), ["displayName"]),
      mapping(entityMapping(#", "filter": "nope == 1""#), ["nope"]),
      mapping(entityMapping(#", "filter": "firstName ==""#), ["filter"]),
      mapping(entityMapping(#", "policy": "NoSuchPolicy""#), ["NoSuchPolicy"]),
      mapping(entityMapping(#", "colour": "red""#), ["colour"]),
      mapping(entityMapping(#", "relationships": {"phones": {"mapping": "Nope", "sources": "$source"}}"#), ["Nope"]),
      mapping(entityMapping(#", "relationships": {"nope": {"mapping": "A", "sources": "$source"}}"#), ["nope"]),
      mapping(entityMapping(#", "instances": [{"when": "firstName != nil"}]"#), ["key"]),
    ]
  }()

  static let rollbackCases: [BadInput] = [
    bad(1, ["rollback", "@S"], ["version 2", "nothing to roll back"]),
    bad(2, ["rollback", "@S", "--to", "0"], ["--to", "0"]),
    bad(2, ["rollback", "@S", "--to", "-3"], ["--to", "-3"]),
    bad(2, ["rollback", "@S", "--to", "x"], ["--to", "'x'"]),
    bad(1, ["rollback", "@S", "--to", "9"], ["version 9"]),
    bad(1, ["rollback", "@S", "--to", "2"], ["already at version 2"]),
    bad(2, ["rollback", "@S", "--to"], ["--to"]),
    bad(2, ["rollback"], ["STORE"]),
    bad(1, ["rollback", "@D/nowhere"], ["@D/nowhere"]),
    bad(1, ["rollback", "@S", "--to", "1"], ["@S/data.mdb", "permission denied"], access: .readOnlyStore),
  ]

  /// The following upcast's flags, `switch`, and reading another version.
  static let followCases: [BadInput] = {
    let v3 = "@X/AddressBook.v3.model.json"
    return [
      bad(2, ["upcast", "@S", "--model", v3, "--switch"], ["--switch", "--follow"]),
      bad(2, ["upcast", "@S", "--model", v3, "--follow", "--dry-run"], ["--follow", "--dry-run"]),
      bad(1, ["switch", "@S", "--to", "9"], ["@S has no version 9", "no upcast is building it"]),
      bad(1, ["switch", "@S", "--to", "2"], ["already at version 2"]),
      bad(1, ["switch", "@S", "--to", "1"], ["@S has no version 1"]),
      bad(2, ["switch", "@S", "--to", "0"], ["--to"]),
      bad(2, ["switch", "@S", "--to", "x"], ["--to", "'x'"]),
      bad(2, ["switch", "@S"], ["--to"]),
      bad(1, ["switch", "@D/nowhere", "--to", "2"], ["@D/nowhere"]),
      bad(1, ["switch", "@S", "--to", "3"], ["@S/data.mdb", "permission denied"], access: .readOnlyStore),
      bad(1, ["log", "@S", "--version", "9"], ["no model version 9"]),
      bad(2, ["log", "@S", "--version", "0"], ["--version"]),
      bad(2, ["log", "@S", "--follow", "--version", "1"], ["--version", "--follow"]),
      bad(1, ["fetch", "@S", "AddressBook", "--version", "7"], ["no model version 7"]),
    ]
  }()
}
