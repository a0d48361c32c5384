import Foundation
import Testing

@Suite("eventtool fetch: --var and key-path sort keys")
struct FetchVariablesCLITests {
  @Test("--var binds numbers, dates and strings; --sort follows to-one relationships")
  func variablesAndSort() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/s"
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v2.model.json"]).status == 0)
    let objects = """
      {"id": "p1", "entity": "AddressBook", "attributes": {"firstName": "Momo", "lastName": "Taro"}, "relationships": {"phones": ["t1"]}}
      {"id": "p2", "entity": "AddressBook", "attributes": {"firstName": "Kin", "lastName": "Aro"}, "relationships": {"phones": ["t2", "t3"]}}
      {"id": "t1", "entity": "PhoneBook", "attributes": {"phoneNumber": "111", "type": 1}}
      {"id": "t2", "entity": "PhoneBook", "attributes": {"phoneNumber": "222", "type": 2}}
      {"id": "t3", "entity": "PhoneBook", "attributes": {"phoneNumber": "007", "type": 2}}
      {"id": "t4", "entity": "PhoneBook", "attributes": {"phoneNumber": "444", "type": 3}}
      """
    #expect(try ToolRunner.eventtool(["import", store, "-"], input: objects).status == 0)
    func fetch(_ arguments: [String]) throws -> [String] {
      let r = try ToolRunner.eventtool(["fetch", store, "PhoneBook"] + arguments)
      #expect(r.status == 0, "\(r.err)")
      return r.out.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
    }
    #expect(
      try fetch(["--where", "type >= $t", "--var", "t=2", "--sort", "phoneNumber"]) == [
        "PhoneBook/5", "PhoneBook/4", "PhoneBook/6",
      ])
    // A JSON string keeps its digits as text.
    #expect(try fetch(["--where", "phoneNumber == $n", "--var", #"n="007""#]) == ["PhoneBook/5"])
    #expect(
      try fetch(["--where", "addressBook.lastName == $who OR type == $t", "--var", "who=Taro", "--var", "t=3"])
        == ["PhoneBook/3", "PhoneBook/6"])
    // By the owner's last name (none first), then the number.
    #expect(
      try fetch(["--sort", "addressBook.lastName", "--sort", "phoneNumber"])
        == ["PhoneBook/6", "PhoneBook/5", "PhoneBook/4", "PhoneBook/3"])
    #expect(
      try fetch(["--sort", "addressBook.lastName desc", "--sort", "phoneNumber"])
        == ["PhoneBook/3", "PhoneBook/5", "PhoneBook/4", "PhoneBook/6"])
  }

  @Test("--var NAME=30 reads an index as the literal 30 does; --var NAME=30.5 scans, with the same answer")
  func variableUsesIndex() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/s"
    let model = dir + "/Phones.model.json"
    try #"""
    {"name": "Phones", "version": 1, "entities": [{"name": "Phone", "attributes": [
      {"name": "number", "type": "string"}, {"name": "type", "type": "int16", "indexed": true}]}]}
    """#.write(toFile: model, atomically: true, encoding: .utf8)
    #expect(try ToolRunner.eventtool(["init", store, "--model", model]).status == 0)
    let objects = (1...6).map {
      #"{"id": "p\#($0)", "entity": "Phone", "attributes": {"number": "\#($0)", "type": \#($0 % 3)}}"#
    }
    #expect(try ToolRunner.eventtool(["import", store, "-"], input: objects.joined(separator: "\n")).status == 0)
    let literal = try ToolRunner.eventtool(["fetch", store, "Phone", "--where", "type == 2"])
    let bound = try ToolRunner.eventtool(["fetch", store, "Phone", "--where", "type == $t", "--var", "t=2"])
    let scanned = try ToolRunner.eventtool(["fetch", store, "Phone", "--where", "type < $t", "--var", "t=0.5"])
    #expect(literal.status == 0 && bound.status == 0 && scanned.status == 0, "\(bound.err) \(scanned.err)")
    #expect(bound.out == literal.out && bound.out.split(separator: "\n").count == 2)
    #expect(bound.err.contains("index on type, 2 examined"), "\(bound.err)")
    #expect(scanned.err.contains("scan, 6 examined") && scanned.out.split(separator: "\n").count == 2, "\(scanned.err)")
  }
}
