import EventGraph
import EventGraphCoreData
import EventGraphMigration
import Foundation
import Testing

/// The two imported SwiftGen versions, through the store's own upcast (Docs/migration.md).
@Suite("Imported versions upcast by inference")
struct InferredUpcastTests {
  func models(options: ModelWriterOptions = .full) throws -> [Model] {
    let (name, versions) = try CoreDataModelBundle.read(Fixtures.swiftGen)
    return try versions.map { v in
      try Model(
        json: Array(try v.model.modelFile(name: name, version: v.version, file: v.file, options: options).text.utf8))
    }
  }

  /// A v1 store with a main object, two secondaries in its ordered to-many and a child.
  func v1Store(_ path: String, _ model: Model) throws {
    let store = try EventStore.create(at: path, model: model)
    _ = try store.importObjects(
      Array(
        #"""
        {"id": "m", "entity": "MainEntity", "attributes": {"string": "s", "boolean": true, "int16": 7}, "relationships": {"oneToMany": ["a", "b"], "oneToOne": "a"}}
        {"id": "a", "entity": "SecondaryEntity"}
        {"id": "b", "entity": "SecondaryEntity"}
        {"id": "c", "entity": "ChildEntity", "attributes": {"string": "child", "boolean": false}}
        """#.utf8))
  }

  @Test(
    "SwiftGen v1 to v2: inference refuses only the new required SecondaryEntity.name; given it, the rest is inferred")
  func swiftGenUpcast() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let ms = try models()
    let path = dir + "/s"
    try v1Store(path, ms[0])
    // Core Data's lightweight migration refuses the same: a new required attribute without default.
    #expect {
      try EventStore.upcast(at: path, to: ms[1], mapping: nil)
    } throws: { error in
      "\(error)".contains("SecondaryEntity.name is required, has no default")
    }
    let mapping = try MappingModel(
      json: Array(
        #"""
        {"source": 1, "destination": 2, "entityMappings": [{"name": "Secondary", "source": "SecondaryEntity",
         "destination": "SecondaryEntity", "attributes": {"name": "'unnamed'"}}]}
        """#.utf8))
    let (report, _) = try EventStore.upcast(at: path, to: ms[1], mapping: mapping)
    #expect(report.switched)
    let after = try EventStore(path: path)
    var lines: [String] = []
    try after.export { lines.append($0) }
    #expect(lines.count == 4)
    #expect(lines[0].contains(#""string": "s""#) && lines[0].contains(#""int16": 7"#))
    // v2's new required attributes with defaults took them; the ordered relationship kept its order.
    #expect(lines[0].contains(#""optionalInt32": 0"#))
    #expect(lines[0].contains(#""oneToMany": ["SecondaryEntity/2", "SecondaryEntity/3"]"#))
    #expect(lines[1].contains(#""name": "unnamed""#))
    #expect(lines[3].contains(#""entity": "ChildEntity""#))
    #expect(try after.verify().isOK)
  }
}
