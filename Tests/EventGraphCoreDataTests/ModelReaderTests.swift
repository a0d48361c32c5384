import EventGraph
import EventGraphCoreData
import EventGraphText
import Foundation
import Testing

/// Expectations written from the Core Data files themselves (the XML read by eye, the
/// legacy and compiled archives dumped with a plist tool), not from the importer's output.
@Suite("Core Data model readers")
struct ModelReaderTests {
  func json(_ text: String) throws -> JSON { try JSON(parsing: Array(text.utf8)) }

  @Test("every fixture model imports, and every version written loads as an EventGraph model")
  func everyFixtureImports() throws {
    // The model loader takes every key the importer writes: nothing is left out any more.
    #expect(ModelWriterOptions.loadable == .full)
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let expected: [String: [Int]] = [
      Fixtures.myMigration: [1, 2], Fixtures.swiftGen: [3, 8], Fixtures.tavant: [2], Fixtures.mogenTest: [9],
      Fixtures.mogenSwift: [3], Fixtures.mobilApp: [1],
    ]
    for path in Fixtures.allModels {
      let files = try CoreDataModelImport.run(path, into: dir + "/" + URL(fileURLWithPath: path).lastPathComponent)
      #expect(files.map(\.entityCount) == expected[path], "\(path)")
      #expect(files.map(\.version) == Array(1...files.count))
      #expect(files.filter(\.isCurrent).count == 1)
      for f in files { _ = try Model(contentsOf: f.path) }
      // Every version's full output loads, and the loaded model writes a file that loads to it.
      for doc in try modelDocuments(path) {
        let model = try Model(json: Array(doc.serialized().utf8))
        #expect(try Model(json: Array(model.jsonText.utf8)) == model, "\(path)")
      }
    }
  }

  @Test("the seed's legacy (Xcode 3) model: v1's person, v2's PhoneBook with its inverse; v2 is current")
  func legacyMyMigration() throws {
    let (name, versions) = try CoreDataModelBundle.read(Fixtures.myMigration)
    #expect(name == "MyMigration_DataModel")
    #expect(versions.map(\.name) == ["MyMigration_DataModel", "MyMigration_DataModel 2"])
    #expect(versions.map(\.format) == ["legacy", "legacy"])
    #expect(versions.map(\.isCurrent) == [false, true])
    let docs = try modelDocuments(Fixtures.myMigration)
    let v1 = try entity(docs[0], "AddressBook")
    #expect(
      v1["attributes"]
        == (try json(
          #"""
          [{"name": "addr1", "type": "string", "optional": true}, {"name": "addr2", "type": "string", "optional": true},
           {"name": "age", "type": "int16", "default": 0}, {"name": "firstName", "type": "string"},
           {"name": "lastName", "type": "string"}, {"name": "phone1", "type": "string", "optional": true},
           {"name": "phone2", "type": "string", "optional": true},
           {"name": "sex", "type": "int16", "optional": true, "default": 0},
           {"name": "zipcode", "type": "string", "optional": true}]
          """#)))
    #expect(v1["relationships"] == .array([]))
    let person = try entity(docs[1], "AddressBook")
    #expect(person["attributes"]?.arrayValue?.contains { $0["name"] == .string("phone1") } == false)
    #expect(
      try property(person, "relationships", "phones")
        == (try json(#"{"name": "phones", "destination": "PhoneBook", "toMany": true, "inverse": "addressBook"}"#)))
    let phone = try entity(docs[1], "PhoneBook")
    #expect(
      phone["relationships"]
        == (try json(
          #"[{"name": "addressBook", "destination": "AddressBook", "optional": false, "inverse": "phones"}]"#)))
    #expect(
      phone["attributes"]
        == (try json(
          #"[{"name": "phoneNumber", "type": "string"}, {"name": "type", "type": "int16", "default": 0}]"#)))
  }

  @Test("SwiftGen's XML model: every attribute type, ordered and many-to-many relationships, what has no meaning kept")
  func swiftGen() throws {
    let docs = try modelDocuments(Fixtures.swiftGen)
    #expect(docs.count == 2)
    let v2 = docs[1]
    let main = try entity(v2, "MainEntity")
    let types = (main["attributes"]?.arrayValue ?? []).map {
      ($0["name"]?.stringValue ?? "", $0["type"]?.stringValue ?? "")
    }
    #expect(
      Dictionary(types, uniquingKeysWith: { a, _ in a }) == [
        "attributedString": "transformable", "binaryData": "binary", "boolean": "boolean", "date": "date",
        "decimal": "decimal", "double": "double", "float": "float", "int16": "int16", "int32": "int32",
        "int64": "int64", "integerEnum": "int16", "integerOptionSet": "int16", "optionalBoolean": "boolean",
        "optionalDouble": "double", "optionalFloat": "float", "optionalInt16": "int16", "optionalInt32": "int32",
        "optionalInt64": "int64", "optionalString": "string", "string": "string", "stringEnum": "string",
        "transformable": "transformable", "transformableCustomArray": "transformable",
        "transformableCustomPolyline": "transformable", "transient": "string", "uri": "uri", "uuid": "uuid",
      ])
    #expect(
      try property(main, "attributes", "decimal")
        == (try json(#"{"name": "decimal", "type": "decimal", "optional": true, "default": "0.0"}"#)))
    #expect(
      try property(main, "attributes", "optionalFloat")
        == (try json(#"{"name": "optionalFloat", "type": "float", "default": 0.0}"#)))
    #expect(
      try property(main, "attributes", "transient")
        == (try json(#"{"name": "transient", "type": "string", "optional": true, "transient": true}"#)))
    #expect(
      try property(main, "attributes", "integerOptionSet")["userInfo"]
        == (try json(#"{"RawType": "IntegerOptionSet", "nonOptionalInit": "true", "unwrapOptional": "true"}"#)))
    #expect(
      main["relationships"]
        == (try json(
          #"""
          [{"name": "manyToMany", "destination": "SecondaryEntity", "toMany": true, "inverse": "manyToMany"},
           {"name": "oneToMany", "destination": "SecondaryEntity", "toMany": true, "ordered": true, "inverse": "oneToMany"},
           {"name": "oneToOne", "destination": "SecondaryEntity", "inverse": "oneToOne"}]
          """#)))
    #expect(
      main["userInfo"]
        == (try json(#"{"coreData.fetchedProperty.fetchedProperty": "NewEntity where true == true", "key": "value"}"#)))
    let child = try entity(v2, "ChildEntity")
    #expect(child["parent"] == .string("MainEntity"))
    #expect(child["attributes"] == .array([]))
    #expect(
      child["userInfo"]
        == (try json(
          #"""
          {"coreData.derived.canonicalOptionalString": "canonical:(optionalString)",
           "coreData.derived.derivedCount": "oneToMany.@count", "coreData.derived.now": "now()", "key": "value"}
          """#)))
    #expect(try entity(v2, "AbstractEntity")["abstract"] == .bool(true))
    let new = try entity(v2, "NewEntity")
    #expect(new["parent"] == .string("AbstractEntity"))
    #expect(new["uniquenessConstraints"] == (try json(#"[["identifier"]]"#)))
    #expect(
      try property(new, "attributes", "identifier")
        == (try json(#"{"name": "identifier", "type": "uuid", "optional": true, "indexed": true}"#)))
    #expect(
      v2["userInfo"]
        == (try json(
          #"""
          {"coreData.configuration.Custom": "NewEntity", "coreData.fetchRequest.DictionaryFetchRequest": "MainEntity",
           "coreData.fetchRequest.ObjectFetchRequest": "MainEntity where uuid == $UUID",
           "coreData.fetchRequest.ObjectIDFetchRequest": "MainEntity where oneToOne.name == $NAME OR string == $NEEDLE"}
          """#)))
    // Version 1: everything optional, a transformable of class UIColor.
    let v1main = try entity(docs[0], "MainEntity")
    #expect(
      try property(v1main, "attributes", "color")
        == (try json(#"{"name": "color", "type": "transformable", "optional": true}"#)))
    #expect(try entity(docs[0], "SecondaryEntity")["attributes"] == .array([]))
  }

  @Test("without the constraint keys, what they would hold is reported by name")
  func reportsWhatIsLeftOut() throws {
    let (name, versions) = try CoreDataModelBundle.read(Fixtures.swiftGen)
    let out = try versions[1].model.modelFile(
      name: name, version: 2, file: "f", options: ModelWriterOptions(rules: false, transient: false))
    for needle in [
      "ChildEntity.now: derived attribute (now())", "MainEntity.fetchedProperty: fetched property",
      "fetch request template ObjectFetchRequest", "configuration Custom (NewEntity)",
      "MainEntity.transient: transient attribute: left out", "NewEntity: uniqueness constraints (identifier)",
      "MainEntity.attributedString: transformable",
    ] {
      #expect(out.notes.contains { $0.hasPrefix(needle) }, "\(needle)")
    }
    let doc = try JSON(parsing: Array(out.text.utf8))
    let main = try entity(doc, "MainEntity")
    #expect(try property(main, "attributes", "attributedString")["type"] == .string("binary"))
    #expect(main["attributes"]?.arrayValue?.contains { $0["name"] == .string("transient") } == false)
    _ = try Model(json: Array(out.text.utf8))
  }

  @Test("mogenerator's model: a minimum, cascades, an ordered inverse, relationships without inverse, user info")
  func mogenerator() throws {
    let doc = try #require(try modelDocuments(Fixtures.mogenTest).first)
    let human = try entity(doc, "Human")
    #expect(
      try property(human, "attributes", "age")
        == (try json(
          #"{"name": "age", "type": "int16", "default": 0, "minValue": 0, "userInfo": {"mogenerator.readonly": "true"}}"#
        )))
    #expect(
      try property(human, "relationships", "meaninglessRelationship")
        == (try json(#"{"name": "meaninglessRelationship", "destination": "EntitySansCustomClass"}"#)))
    #expect(
      human["userInfo"]
        == (try json(#"{"additionalHeaderFileName": "Gender.h", "key with.dots...": "value with \"quotes\""}"#)))
    let parent = try entity(doc, "Parent")
    #expect(parent["parent"] == .string("Human"))
    #expect(
      parent["relationships"]
        == (try json(
          #"""
          [{"name": "children", "destination": "Child", "toMany": true, "deleteRule": "cascade"},
           {"name": "orderedChildren", "destination": "Child", "toMany": true, "ordered": true, "inverse": "parent",
            "deleteRule": "cascade"}]
          """#)))
    #expect(
      try property(parent, "attributes", "myInt16Transient")
        == (try json(#"{"name": "myInt16Transient", "type": "int16", "optional": true, "transient": true}"#)))
    #expect(
      try property(entity(doc, "Child"), "relationships", "parent")
        == (try json(#"{"name": "parent", "destination": "Parent", "inverse": "orderedChildren"}"#)))
    #expect(try entity(doc, "ConcreteEntityWithCustomClass1")["parent"] == .string("EntitySansCustomClass2"))
  }

  @Test("TavantTrade's model and mogenerator's Swift test model: one-to-many with inverses and a cascade")
  func smallXMLModels() throws {
    let tavant = try #require(try modelDocuments(Fixtures.tavant).first)
    #expect(
      try entity(tavant, "FeedbackCategory")["relationships"]
        == (try json(
          #"[{"name": "subcategory", "destination": "FeedbackSubCategory", "toMany": true, "inverse": "category"}]"#)))
    #expect(
      try entity(tavant, "FeedbackSubCategory")["attributes"]
        == (try json(#"[{"name": "name", "type": "string", "optional": true}]"#)))
    let mogen = try #require(try modelDocuments(Fixtures.mogenSwift).first)
    #expect(
      try entity(mogen, "UnorderedToManySrc")["relationships"]
        == (try json(
          #"""
          [{"name": "relationship", "destination": "UnorderedToManyDst", "toMany": true, "inverse": "relationship",
            "deleteRule": "cascade"}]
          """#)))
  }

  @Test("the compiled .momd: NSManagedObjectModel's entity and attributes, renaming identifiers equal to names dropped")
  func compiled() throws {
    let (name, versions) = try CoreDataModelBundle.read(Fixtures.mobilApp)
    #expect(name == "Model")
    #expect(versions.map(\.format) == ["compiled"])
    let doc = try #require(try modelDocuments(Fixtures.mobilApp).first)
    #expect(
      try entity(doc, "User")
        == (try json(
          #"""
          {"name": "User", "attributes": [{"name": "email", "type": "string", "optional": true},
           {"name": "name", "type": "string", "optional": true}, {"name": "password", "type": "string", "optional": true},
           {"name": "phone", "type": "string", "optional": true}], "relationships": []}
          """#)))
  }

  @Test("versions are in the natural order of their names")
  func naturalOrder() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let bundle = dir + "/M.xcdatamodeld"
    let contents = try String(
      contentsOfFile: Fixtures.path("TavantTrade/Model.xcdatamodeld/Model.xcdatamodel/contents"), encoding: .utf8)
    for v in ["M 10", "M", "M 2", "M 9"] {
      try FileManager.default.createDirectory(atPath: bundle + "/\(v).xcdatamodel", withIntermediateDirectories: true)
      try contents.write(toFile: bundle + "/\(v).xcdatamodel/contents", atomically: true, encoding: .utf8)
    }
    let (_, versions) = try CoreDataModelBundle.read(bundle)
    #expect(versions.map(\.name) == ["M", "M 2", "M 9", "M 10"])
    // No .xccurrentversion: the last is current.
    #expect(versions.map(\.isCurrent) == [false, false, false, true])
  }
}

/// Inputs the fuzzers found, kept as tests (their files are in Fuzz/corpus).
@Suite("Core Data reader fuzz findings")
struct CoreDataFuzzRegressionTests {
  @Test(
    "XML that is not valid UTF-8 is refused before XMLParser sees it (it trapped on such a name)",
    arguments: [
      #"<model><entity name="A" x"#.utf8 + [0xFF] + #"="1"/></model>"#.utf8,
      #"<mo"#.utf8 + [0xFF] + #"del/>"#.utf8,
    ].map { Array($0) })
  func invalidUTF8(_ bytes: [UInt8]) {
    #expect {
      try CoreDataModelBundle.read(bytes, file: "contents")
    } throws: { error in
      "\(error)" == "contents: not valid UTF-8 at byte \(bytes.firstIndex(of: 0xFF) ?? -1)"
    }
  }

  @Test("a binary plist reference wider than Int is refused (it trapped converting it)")
  func hugeReference() {
    // bplist00, one object: an 8-byte UID of all ones; then the offset table and trailer.
    let bytes: [UInt8] =
      Array("bplist00".utf8) + [0x87] + [UInt8](repeating: 0xFF, count: 8) + [8]
      + [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 15) + [17]
    #expect {
      try CoreDataModelBundle.read(bytes, file: "m.mom")
    } throws: { error in
      "\(error)".hasPrefix("m.mom: object 0 of the binary property list: a reference 18446744073709551615 too large")
    }
  }

  @Test(
    "a processing instruction or entity declaration past the XML declaration is refused (XMLParser crashed on '<?nc?>')",
    arguments: [
      ("<?nc?>\nl userienD>st l>", 0), (#"<?xml version="1.0"?><model><?x?></model>"#, 28),
      (#"<!DOCTYPE m [<!ENTITY a "b">]><model/>"#, 13),
      // A declaration left open: its `?>` is a later instruction's (XMLParser crashed).
      (#"<?xml version="1.0" a="b"/>"# + "\n<x/>\n<?nc?>\n<model/>", 0),
      ("<?xml ve>\n<Curreoel<?xmlp?>\n<! pl>\n", 0),  // the plist fuzzer's, the same crash
    ])
  func processingInstruction(_ c: (String, Int)) {
    #expect {
      try CoreDataModelBundle.read(Array(c.0.utf8), file: "contents")
    } throws: { error in
      "\(error)"
        == "contents: a processing instruction or entity declaration at byte \(c.1): not part of a Core Data file"
    }
  }
}
