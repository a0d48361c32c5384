import EventGraph
import EventGraphCoreData
import EventGraphMigration
import EventGraphText
import Foundation
import Testing

/// The seed's custom policy, as `Docs/migration.md` writes it in Swift.
struct SeedPhoneSplit: MigrationPolicy {
  func createDestinationInstances(for source: SourceObject, mapping: CompiledEntityMapping, manager: MigrationManager)
    throws
  {
    for (attribute, type) in [("phone1", 1), ("phone2", 2)] {
      guard let number = try manager.value(of: source, attribute)?.stringValue, !number.isEmpty else { continue }
      let phone = try manager.insertDestination("PhoneBook", key: attribute)
      try manager.set(phone, "phoneNumber", .string(number))
      try manager.set(phone, "type", .int16(Int16(type)))
      manager.associate(source: source, destination: phone, mapping: mapping)
    }
  }
}

@Suite("Core Data mapping model import")
struct MappingImportTests {
  let mappingModel = Fixtures.path("MyMigration/v1_to_v2.xcmappingmodel")

  @Test("the seed's mapping model: its three entity mappings, filter, relationship mapping and custom policy")
  func seedMapping() throws {
    let m = try CoreDataMappingImport.run(mappingModel)
    #expect(m.source == 1 && m.destination == 2 && m.entityMappings == 3)
    #expect(
      try JSON(parsing: Array(m.text.utf8))
        == (try JSON(
          parsing: Array(
            #"""
            {"source": 1, "destination": 2, "entityMappings": [
             {"name": "AddressBookToAddressBook", "source": "AddressBook", "destination": "AddressBook",
              "relationships": {"phones": {"mapping": "AddressBookToPhoneBook", "sources": "$source"}}},
             {"name": "AddressBookToPhoneBook", "source": "AddressBook", "destination": "PhoneBook",
              "filter": "phone1 != nil || phone2 != nil", "policy": "AddressBookToPhoneBook"},
             {"name": "AddPhoneBook", "destination": "PhoneBook"}]}
            """#.utf8))))
    #expect(
      m.notes.contains {
        $0.contains("custom migration policy class AddressBookToPhoneBook") && $0.contains("Docs/migration.md")
      })
  }

  @Test("value expressions: key paths and literals kept, Core Data's FUNCTION where the language has it")
  func expressions() {
    #expect(MappingExpression.translate("$source.firstName") == "$source.firstName")
    #expect(MappingExpression.translate(#"FUNCTION($source.name, "uppercaseString")"#) == "uppercase($source.name)")
    #expect(MappingExpression.translate("\"tel\"") == "'tel'")
    #expect(MappingExpression.translate("2") == "2")
    #expect(
      MappingExpression.translate(#"FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "A", "x")"#)
        == nil)
  }

  /// Imports both model versions and the v1 XML store; returns the store and the models.
  func seedStore(_ dir: String) throws -> (String, Model) {
    let files = try CoreDataModelImport.run(Fixtures.myMigration, into: dir + "/models")
    _ = try CoreDataStoreImport.run(
      store: dir + "/book", model: Fixtures.myMigration, file: Fixtures.path("MyMigration/v1_storedata"))
    return (dir + "/book", try Model(contentsOf: files[1].path))
  }

  @Test(
    "with a Swift policy registered under the class name, the imported mapping reproduces the seed's PhoneBook list")
  func withPolicy() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, v2) = try seedStore(dir)
    let mapping = try MappingModel(json: Array(try CoreDataMappingImport.run(mappingModel).text.utf8))
    var policies = PolicyRegistry()
    policies.register(SeedPhoneSplit(), as: "AddressBookToPhoneBook")
    _ = try EventStore.upcast(at: store, to: v2, mapping: mapping, policies: policies)
    #expect(try phoneList(store) == Self.seedList)
  }

  @Test("with the declarative split in place of the policy, the same list")
  func withSplit() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, v2) = try seedStore(dir)
    var mapping = try MappingModel(json: Array(try CoreDataMappingImport.run(mappingModel).text.utf8))
    let i = try #require(mapping.entityMappings.firstIndex { $0.policy == "AddressBookToPhoneBook" })
    mapping.entityMappings[i].policy = nil
    mapping.entityMappings[i].instances = [
      InstanceMapping(
        key: "landline", when: "phone1 != nil", attributes: ["phoneNumber": "$source.phone1", "type": "1"]),
      InstanceMapping(
        key: "mobile", when: "phone2 != nil", attributes: ["phoneNumber": "$source.phone2", "type": "2"]),
    ]
    _ = try EventStore.upcast(at: store, to: v2, mapping: mapping)
    #expect(try phoneList(store) == Self.seedList)
  }

  /// The seed's expected log, sorted.
  static let seedList = ["桃 太郎 :Tel 090-111-9999", "桃 太郎 :Tel 123-4567-7891", "浦島 太郎 :Tel 090-1234-5678"]

  func phoneList(_ path: String) throws -> [String] {
    try EventStore(path: path, options: StoreOptions(readOnly: true)).read { s in
      try s.objects(of: "PhoneBook").map { p in
        let owner = try s.related(p, "addressBook").first
        let first = try owner.flatMap { try s.value($0, "firstName")?.stringValue } ?? "?"
        let last = try owner.flatMap { try s.value($0, "lastName")?.stringValue } ?? "?"
        return "\(first) \(last) :Tel \(try s.value(p, "phoneNumber")?.stringValue ?? "?")"
      }.sorted()
    }
  }
}

/// Where `import-mapping` finds the model a mapping names: as Xcode does, by the bundle's
/// name next to the mapping, then up the tree (issue 29).
@Suite("Core Data mapping models: the model they name")
struct MappingModelLocationTests {
  /// A project folder with the seed's mapping at `mappingFolder` and its model bundle at
  /// `modelFolder`, both under a fresh directory; returns the mapping's path.
  func project(mappingFolder: String, modelFolder: String?) throws -> (dir: String, mapping: String) {
    let dir = temporaryDirectory()
    let fm = FileManager.default
    let mapping = dir + "/" + mappingFolder + "/v1_to_v2.xcmappingmodel"
    try fm.createDirectory(atPath: dir + "/" + mappingFolder, withIntermediateDirectories: true)
    try fm.copyItem(atPath: Fixtures.path("MyMigration/v1_to_v2.xcmappingmodel"), toPath: mapping)
    if let modelFolder {
      try fm.createDirectory(atPath: dir + "/" + modelFolder, withIntermediateDirectories: true)
      try fm.copyItem(
        atPath: Fixtures.myMigration, toPath: dir + "/" + modelFolder + "/MyMigration_DataModel.xcdatamodeld")
    }
    return (dir, mapping)
  }

  @Test(
    "the bundle is found beside the mapping, in a folder above it, or at the folder the path names",
    arguments: [("App", "App"), ("App/Mappings", "App"), ("App/Mappings/Old", "."), ("App", ".")])
  func found(mappingFolder: String, modelFolder: String) throws {
    let (dir, mapping) = try project(mappingFolder: mappingFolder, modelFolder: modelFolder)
    defer { removeDirectory(dir) }
    let m = try CoreDataMappingImport.run(mapping)
    #expect(m.source == 1 && m.destination == 2)
  }

  @Test("a model in none of the folders up the tree is refused, naming it and where the search began")
  func missing() throws {
    let (dir, mapping) = try project(mappingFolder: "App/Mappings", modelFolder: nil)
    defer { removeDirectory(dir) }
    let refusal = #expect(throws: CoreDataError.self) { try CoreDataMappingImport.run(mapping) }
    let text = refusal.map { "\($0)" } ?? ""
    #expect(text.contains("MyMigration_DataModel.xcdatamodeld"), "\(text)")
    #expect(text.contains("App/Mappings"), "\(text)")
  }
}

/// What a mapping model holds that EventGraph's mappings cannot: left out and noted, so
/// that the file written always loads (issue 29).
@Suite("Core Data mapping models: what has no EventGraph form")
struct MappingOmissionTests {
  @Test("set operators in a key path are the key path through its collections")
  func setOperators() {
    #expect(
      MappingExpression.withoutSetOperators("$source.teams.@distinctUnionOfSets.members") == "$source.teams.members")
    #expect(MappingExpression.withoutSetOperators("$source.a.@unionOfArrays.b.@unionOfSets.c") == "$source.a.b.c")
    #expect(MappingExpression.withoutSetOperators("$source.members") == "$source.members")
    #expect(MappingExpression.withoutSetOperators("$source.@count") == "$source.@count")
  }

  @Test("a filter and a relationship's sources with no EventGraph form are left out and noted; the file loads")
  func leftOutAndLoads() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let fm = FileManager.default
    try fm.copyItem(atPath: Fixtures.myMigration, toPath: dir + "/MyMigration_DataModel.xcdatamodeld")
    let mapping = dir + "/v1_to_v2.xcmappingmodel"
    try fm.createDirectory(atPath: mapping, withIntermediateDirectories: true)
    var xml = try String(
      contentsOfFile: Fixtures.path("MyMigration/v1_to_v2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
    xml = xml.replacingOccurrences(of: "phone1 != nil || phone2 != nil", with: "phone1 BETWEENISH 2")
    // Both relationship mappings of the file (one is the entity mapping's, one a leftover).
    let source = #"<attribute name="sourcekeypath" type="string">$source</attribute>"#
    #expect(xml.components(separatedBy: source).count == 3)
    xml = xml.replacingOccurrences(
      of: source, with: #"<attribute name="sourcekeypath" type="string">$source.@unionOfSets.firstName</attribute>"#)
    try xml.write(toFile: mapping + "/xcmapping.xml", atomically: true, encoding: .utf8)
    let m = try CoreDataMappingImport.run(mapping)
    #expect(
      m.notes.contains { $0.contains("filter 'phone1 BETWEENISH 2' has no EventGraph form") && $0.contains("left out") }
    )
    #expect(
      m.notes.contains {
        $0.contains("source key path '$source.@unionOfSets.firstName' has no EventGraph form")
          && $0.contains("not objects")
      }, "\(m.notes)")
    let doc = try JSON(parsing: Array(m.text.utf8))
    #expect(!m.text.contains("BETWEENISH") && !m.text.contains("@unionOfSets"))
    #expect(doc["entityMappings"]?.arrayValue?.count == 3)
    _ = try MappingModel(json: Array(m.text.utf8))
  }
}
