import Foundation
import Testing

/// The model's rules as `eventtool` users meet them: an upcast to a model whose rules the
/// data breaks, and an import that breaks them.
@Suite("eventtool and the model's rules: uniqueness, value rules")
struct ModelRulesCLITests {
  /// The seed's v2 model as version 3, PhoneBook given one more attribute, and optionally a
  /// uniqueness constraint and a minimum type.
  static func ruled(_ attribute: String, unique: String? = nil, minType: Int? = nil) throws -> String {
    var text = try String(contentsOfFile: examples + "/AddressBook.v2.model.json", encoding: .utf8)
    text = text.replacingOccurrences(of: #""version": 2"#, with: #""version": 3"#)
    let type = minType.map { #", "minValue": \#($0)"# } ?? ""
    text = text.replacingOccurrences(
      of: #"{"name": "type", "type": "int16", "default": 0}"#,
      with: #"{"name": "type", "type": "int16", "default": 2\#(type)}, "# + attribute)
    if let unique {
      text = text.replacingOccurrences(
        of: #""name": "PhoneBook","#, with: #""name": "PhoneBook", "uniquenessConstraints": [["\#(unique)"]],"#)
    }
    return text
  }

  static let people = """
    {"id": "p1", "entity": "AddressBook", "attributes": {"firstName": "A", "lastName": "B"}, "relationships": {"phones": ["t1", "t2"]}}
    {"id": "t1", "entity": "PhoneBook", "attributes": {"phoneNumber": "123", "type": 1}}
    {"id": "t2", "entity": "PhoneBook", "attributes": {"phoneNumber": "090", "type": 2}}
    """

  struct Case: Sendable, CustomStringConvertible {
    let attribute: String
    let unique: String?
    let minType: Int?
    let message: String
    var description: String { message }
  }

  static let cases = [
    Case(
      attribute: #"{"name": "kind", "type": "string", "default": "mobile"}"#, unique: "kind", minType: nil,
      message: "PhoneBook/3: uniqueness constraint [kind] of PhoneBook: 'mobile' is already held by PhoneBook/2"),
    Case(
      attribute: #"{"name": "kind", "type": "string", "optional": true}"#, unique: nil, minType: 2,
      message: "PhoneBook/2.type: 1 is below minValue 2"),
  ]

  @Test(
    "an upcast to a model whose rules the data breaks exits 1, names the objects and the rule, keeps v2",
    arguments: cases)
  func upcastRefused(_ c: Case) throws {
    let (attribute, unique, minType, message) = (c.attribute, c.unique, c.minType, c.message)
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/book"
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v2.model.json"]).status == 0)
    #expect(try ToolRunner.eventtool(["import", store, "-"], input: Self.people).status == 0)
    let before = try ToolRunner.eventtool(["export", store]).out
    let model = dir + "/v3.model.json"
    try Self.ruled(attribute, unique: unique, minType: minType).write(toFile: model, atomically: true, encoding: .utf8)
    let r = try ToolRunner.eventtool(["upcast", store, "--model", model])
    #expect(r.status == 1)
    #expect(r.err.contains(message), "\(r.err)")
    #expect(try ToolRunner.eventtool(["export", store]).out == before)
    #expect(try ToolRunner.eventtool(["stats", store]).out.contains("AddressBook v2"))
  }

  @Test("stats lists every model version with its content hash, in text and JSON")
  func statsShowsHashes() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/book"
    let upcast = try makeUpcastBook(store)
    #expect(upcast.status == 0, "\(upcast.err)")
    let text = try ToolRunner.eventtool(["stats", store]).out
    let lines = text.split(separator: "\n").filter { $0.hasPrefix("version  ") }
    #expect(lines.count == 2)
    #expect(lines.first?.hasPrefix("version  v1 AddressBook sha256 ") == true)
    #expect(lines.last?.hasSuffix(" (active)") == true)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(try ToolRunner.eventtool(["stats", store, "--json"]).out.utf8))
        as? [String: Any])
    let models = try #require(json["models"] as? [[String: Any]])
    #expect(models.map { $0["version"] as? Int } == [1, 2])
    let hashes = models.compactMap { $0["sha256"] as? String }
    #expect(hashes.count == 2 && hashes.allSatisfy { $0.count == 64 } && Set(hashes).count == 2)
    #expect(lines.first?.contains(hashes[0]) == true)
    // Back to v1, then a v2 that is another model: refused, the entities named.
    #expect(try ToolRunner.eventtool(["rollback", store]).status == 0)
    var other = try String(contentsOfFile: examples + "/AddressBook.v2.model.json", encoding: .utf8)
    other = other.replacingOccurrences(
      of: #"{"name": "phoneNumber", "type": "string"}"#, with: #"{"name": "number", "type": "string"}"#)
    try other.write(toFile: dir + "/other.model.json", atomically: true, encoding: .utf8)
    let refused = try ToolRunner.eventtool(["upcast", store, "--model", dir + "/other.model.json"])
    #expect(refused.status == 1)
    #expect(refused.err.contains("the store already has a model version 2"), "\(refused.err)")
    #expect(refused.err.contains("PhoneBook (changed)"), "\(refused.err)")
    #expect(
      try ToolRunner.eventtool(["stats", store]).out.contains("version  v1 AddressBook sha256 \(hashes[0]) (active)"))
  }
}
