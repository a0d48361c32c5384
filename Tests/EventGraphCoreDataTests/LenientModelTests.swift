import EventGraph
import EventGraphCoreData
import EventGraphText
import Foundation
import Testing

/// What Core Data accepts in a model and the import used to refuse: defaults written in
/// another type's form, and user info that is not text (issue 29).
@Suite("Core Data models as Core Data reads them")
struct LenientModelTests {
  /// The model file written for a one-version XML model of `xml`'s entities.
  func modelFile(_ xml: String) throws -> (doc: JSON, notes: [String]) {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let bundle = dir + "/m.xcdatamodel"
    try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
    try #"<?xml version="1.0"?><model>\#(xml)</model>"#.write(
      toFile: bundle + "/contents", atomically: true, encoding: .utf8)
    let (name, versions) = try CoreDataModelBundle.read(bundle)
    let out = try #require(versions.first).model.modelFile(name: name, version: 1, file: bundle, options: .full)
    _ = try Model(json: Array(out.text.utf8))
    return (try JSON(parsing: Array(out.text.utf8)), out.notes)
  }

  @Test(
    "a default in another type's form is read as NSString reads it, and each such reading is noted",
    arguments: [
      ("Integer 16", "NO", JSON.int(0)), ("Integer 32", "YES", .int(0)), ("Integer 64", "12 apples", .int(12)),
      ("Integer 16", "3.7", .int(3)), ("Integer 16", " -42x", .int(-42)), ("Boolean", "0.0", .bool(false)),
      ("Boolean", "0.5", .bool(false)), ("Boolean", "007", .bool(true)), ("Boolean", "y", .bool(true)),
      ("Boolean", "-1", .bool(true)), ("Boolean", "none", .bool(false)), ("Double", "1.5e3kg", .double(1500)),
      ("Float", "abc", .double(0)),
    ])
  func lenientDefaults(type: String, text: String, expected: JSON) throws {
    let (doc, notes) = try modelFile(
      #"<entity name="A"><attribute name="n" attributeType="\#(type)" defaultValueString="\#(text)"/></entity>"#)
    #expect(try property(try entity(doc, "A"), "attributes", "n")["default"] == expected)
    #expect(notes.contains { $0.hasPrefix("A.n: default '\(text)' is no \(type) value: read as ") }, "\(notes)")
  }

  @Test("a default in the type's own form is taken without a note; a whole number out of range is still refused")
  func strictStays() throws {
    let (doc, notes) = try modelFile(
      #"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="-7"/><attribute name="b" attributeType="Boolean" defaultValueString="YES"/><attribute name="z" attributeType="Integer 32" defaultValueString="0.0"/></entity>"#
    )
    let a = try entity(doc, "A")
    #expect(try property(a, "attributes", "n")["default"] == .int(-7))
    #expect(try property(a, "attributes", "b")["default"] == .bool(true))
    #expect(try property(a, "attributes", "z")["default"] == .int(0))
    #expect(!notes.contains { $0.contains("default") }, "\(notes)")
    #expect(throws: CoreDataError.self) {
      try modelFile(
        #"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity>"#)
    }
    #expect(throws: CoreDataError.self) {
      try modelFile(
        #"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="99999x"/></entity>"#)
    }
  }

  @Test("legacy user info that is not text is kept as its JSON, noted; a value with no JSON form is left out, noted")
  func legacyUserInfo() throws {
    // Built to the shape found in shipping apps: the seed's legacy model (MyMigration, v2)
    // with an entity's user info holding an array (com.apple.syncservices.IdentityProperties),
    // a dictionary, an NSColor and a string (Fixtures/README.md, "Built").
    let (name, versions) = try CoreDataModelBundle.read(Fixtures.path("Built/LegacyUserInfo.xcdatamodel"))
    let model = try #require(versions.first).model
    let info = try #require(model.entities.first { !$0.userInfo.isEmpty }).userInfo
    #expect(info["com.apple.syncservices.IdentityProperties"] == #"["firstName", "lastName"]"#)
    #expect(info["weights"] == #"{"a": 1}"#)
    #expect(info["note"] == "plain text")
    #expect(info["colour"] == nil)
    let notes = model.readNotes
    #expect(
      notes.contains {
        $0.contains("user info 'com.apple.syncservices.IdentityProperties' is not text: kept as its JSON")
      })
    #expect(notes.contains { $0.contains("user info 'colour' (NSColor) has no JSON form: left out") })
    let out = try model.modelFile(name: name, version: 1, file: "f", options: .full)
    #expect(out.notes.contains { $0.contains("'colour'") })
    _ = try Model(json: Array(out.text.utf8))
  }
}
