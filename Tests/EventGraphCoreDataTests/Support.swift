import EventGraph
import EventGraphCoreData
import EventGraphText
import Foundation
import Testing

/// The Core Data files of `Fixtures/` (copies of public projects' files; `Fixtures/README.md`
/// names each one's source).
enum Fixtures {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

  static func path(_ relative: String) -> String { root + "/" + relative }

  static let myMigration = path("MyMigration/MyMigration_DataModel.xcdatamodeld")
  static let swiftGen = path("SwiftGen/Model.xcdatamodeld")
  static let tavant = path("TavantTrade/Model.xcdatamodeld")
  static let mogenTest = path("mogenerator/test.xcdatamodel")
  static let mogenSwift = path("mogenerator/MogenSwiftTest.xcdatamodeld")
  static let mobilApp = path("MobilApp/Model.momd")
  static let allModels = [myMigration, swiftGen, tavant, mogenTest, mogenSwift, mobilApp]
}

func temporaryDirectory(_ label: String = #function) -> String {
  let clean = label.filter { $0.isLetter || $0.isNumber }
  let path = FileManager.default.temporaryDirectory.appendingPathComponent("cd-\(clean)-\(UUID().uuidString)").path
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

/// The model files made from every version of a fixture, parsed, with every key.
func modelDocuments(_ path: String, options: ModelWriterOptions = .full) throws -> [JSON] {
  let (name, versions) = try CoreDataModelBundle.read(path)
  return try versions.map { v in
    try JSON(
      parsing: Array(try v.model.modelFile(name: name, version: v.version, file: v.file, options: options).text.utf8))
  }
}

/// An entity of a model document, by name.
func entity(_ doc: JSON, _ name: String) throws -> JSON {
  try #require(doc["entities"]?.arrayValue?.first { $0["name"] == .string(name) }, "no entity \(name)")
}

/// A property (`attributes` or `relationships`) of an entity, by name.
func property(_ entity: JSON, _ kind: String, _ name: String) throws -> JSON {
  try #require(entity[kind]?.arrayValue?.first { $0["name"] == .string(name) }, "no \(kind) \(name)")
}

/// A JSON object from Swift literals, for expectations.
func object(_ fields: (String, JSON)...) -> JSON { .object(fields.map { JSONField($0.0, $0.1) }) }
