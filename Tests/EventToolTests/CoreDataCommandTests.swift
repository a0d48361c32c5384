import EventGraphText
import Foundation
import Testing

/// The Core Data commands run as a user runs them, on the fixtures of
/// `Tests/EventGraphCoreDataTests/Fixtures` (public projects' files).
@Suite("Core Data commands, end to end")
struct CoreDataCommandTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("EventGraphCoreDataTests/Fixtures").path

  @Test("import-model prints each file with its entity count; --json lists them with their notes")
  func importModel() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let r = try ToolRunner.eventtool(["import-model", Self.fixtures + "/SwiftGen/Model.xcdatamodeld", "--out", dir])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("wrote \(dir)/Model.v1.model.json: 3 entities (Model, xml)"))
    #expect(r.out.contains("wrote \(dir)/Model.v2.model.json: 8 entities (Model 2, xml, current)"))
    let j = try ToolRunner.eventtool([
      "import-model", Self.fixtures + "/MobilApp/Model.momd", "--out", dir + "/m", "--json",
    ])
    let files = try JSON(parsing: Array(j.out.utf8))["files"]?.arrayValue ?? []
    #expect(files.count == 1)
    #expect(files.first?["entities"] == .int(1) && files.first?["format"] == .string("compiled"))
    // The file written starts a store.
    let i = try ToolRunner.eventtool(["init", dir + "/s", "--model", dir + "/m/Model.v1.model.json"])
    #expect(i.status == 0 && i.out.contains("model Model v1, 1 entities"))
  }

  @Test("import-coredata prints objects per entity, --json maps each Core Data object to its identity")
  func importStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let model = Self.fixtures + "/TavantTrade/Model.xcdatamodeld"
    let r = try ToolRunner.eventtool([
      "import-coredata", dir + "/t", Self.fixtures + "/TavantTrade/Model.sqlite", "--model", model, "--json",
    ])
    #expect(r.status == 0, "\(r.err)")
    let json = try JSON(parsing: Array(r.out.utf8))
    #expect(
      json["objects"] == .object([JSONField("FeedbackCategory", .int(19)), JSONField("FeedbackSubCategory", .int(79))]))
    #expect(json["identities"]?["FeedbackCategory/p1"] == .string("FeedbackCategory/1"))
    #expect(json["identities"]?.objectFields?.count == 98)
    let export = try ToolRunner.eventtool(["export", dir + "/t", "--entity", "FeedbackCategory"])
    #expect(export.out.split(separator: "\n").count == 19)
  }

  @Test("demo --coredata tells the seed's story from its files and ends with the seed's PhoneBook list")
  func demo() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let r = try ToolRunner.eventtool(["demo", dir + "/d", "--coredata", "--files", Self.fixtures + "/MyMigration"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("created the store and imported with model version 1 (MyMigration_DataModel): 3 objects"))
    #expect(r.out.contains("custom migration policy class AddressBookToPhoneBook"))
    #expect(r.out.contains("浦島 太郎 :Tel 090-1234-5678\n桃 太郎 :Tel 123-4567-7891\n桃 太郎 :Tel 090-111-9999\n"))
  }

  @Test("--strict refuses what would be converted or left out, writing nothing; without it the same notes are printed")
  func strict() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    // SwiftGen's model has what EventGraph keeps only in user info (fetched properties, …).
    let model = Self.fixtures + "/SwiftGen/Model.xcdatamodeld"
    let refused = try ToolRunner.eventtool(["import-model", model, "--out", dir + "/strict", "--strict"])
    #expect(refused.status == 1 && refused.err.contains("strict: the import would convert or leave out"))
    #expect(refused.err.contains("nothing written"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/strict"))
    #expect(try ToolRunner.eventtool(["import-model", model, "--out", dir + "/lax"]).out.contains("  note: "))
    // The seed's mapping names a custom policy class: a note, so --strict refuses it.
    let mapping = Self.fixtures + "/MyMigration/v1_to_v2.xcmappingmodel"
    let out = dir + "/m.mapping.json"
    let strictMapping = try ToolRunner.eventtool(["import-mapping", mapping, "--out", out, "--strict"])
    #expect(strictMapping.status == 1 && strictMapping.err.contains("custom migration policy class"))
    #expect(!FileManager.default.fileExists(atPath: out))
    let j = try ToolRunner.eventtool(["import-mapping", mapping, "--out", out, "--json"])
    #expect(j.status == 0, "\(j.err)")
    let json = try JSON(parsing: Array(j.out.utf8))
    #expect(json["entityMappings"] == .int(3) && json["source"] == .int(1) && json["destination"] == .int(2))
    #expect(json["notes"]?.arrayValue?.contains { $0.stringValue?.contains("custom migration policy") == true } == true)
    // TavantTrade's store converts as it is: --strict takes it.
    let store = try ToolRunner.eventtool([
      "import-coredata", dir + "/t", Self.fixtures + "/TavantTrade/Model.sqlite", "--model",
      Self.fixtures + "/TavantTrade/Model.xcdatamodeld", "--strict",
    ])
    #expect(store.status == 0, "\(store.err)")
  }
}
