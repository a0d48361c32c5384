import EventGraph
import Foundation
import Testing

@testable import EventGraphMigration

func temporaryDirectory(_ label: String = #function) -> String {
  let safe = label.filter { $0.isLetter || $0.isNumber }
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("eventgraph-migration-\(safe)-\(UUID().uuidString.prefix(8))").path
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

enum Examples {
  static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Docs/examples").path
  static func v1() throws -> Model { try Model(contentsOf: root + "/AddressBook.v1.model.json") }
  static func v2() throws -> Model { try Model(contentsOf: root + "/AddressBook.v2.model.json") }
  static func mapping() throws -> MappingModel {
    try MappingModel(contentsOf: root + "/AddressBook.v1-v2.mapping.json")
  }
}

/// The seed's three people in a v1 store: 桃太郎 (two phones), 浦島太郎 (mobile), 一寸法師 (none).
func seedStore(_ path: String) throws -> [String: ObjectID] {
  let store = try EventStore.create(at: path, model: try Examples.v1())
  var ids: [String: ObjectID] = [:]
  ids["momo"] = try store.write { tx in
    try tx.insert(
      "AddressBook",
      [
        "firstName": .string("桃"), "lastName": .string("太郎"),
        "phone1": .string("123-4567-7891"), "phone2": .string("090-111-9999"),
      ])
  }.value
  ids["urashima"] = try store.write { tx in
    try tx.insert(
      "AddressBook", ["firstName": .string("浦島"), "lastName": .string("太郎"), "phone2": .string("090-1234-5678")])
  }.value
  ids["issun"] = try store.write { tx in
    try tx.insert("AddressBook", ["firstName": .string("一寸"), "lastName": .string("法師")])
  }.value
  return ids
}

/// The seed's store, then one commit per change of a person's attribute (`who` names the
/// person as ``seedStore(_:)`` does: "momo", "urashima", "issun").
func seedStore(_ path: String, thenSet who: String, _ changes: [(String, Value?)]) throws -> [String: ObjectID] {
  let ids = try seedStore(path)
  let person = try #require(ids[who])
  let store = try EventStore(path: path)
  for (attribute, value) in changes { try store.write { tx in try tx.set(person, attribute, value) } }
  return ids
}

/// "桃 太郎 :Tel 123-4567-7891", as the seed's post printed its PhoneBook list.
func phoneList(_ store: EventStore) throws -> [String] {
  try store.read { s in
    try s.objects(of: "PhoneBook").map { p in
      let owner = try s.related(p, "addressBook").first
      let first = try owner.flatMap { try s.value($0, "firstName")?.stringValue } ?? "?"
      let last = try owner.flatMap { try s.value($0, "lastName")?.stringValue } ?? "?"
      return "\(first) \(last) :Tel \(try s.value(p, "phoneNumber")?.stringValue ?? "?")"
    }.sorted()
  }
}
