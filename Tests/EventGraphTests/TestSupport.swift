import Foundation
import Testing

@testable import EventGraph

/// A fresh directory under the system's temporary directory, removed by the caller's `defer`.
func temporaryDirectory(_ label: String = #function) -> String {
  let safe = label.filter { $0.isLetter || $0.isNumber }
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("eventgraph-tests-\(safe)-\(UUID().uuidString.prefix(8))").path
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

enum Fixtures {
  /// The package root, found from this file's path.
  static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  static func model(_ file: String) throws -> Model {
    try Model(contentsOf: root + "/Docs/examples/" + file)
  }

  static func addressBookV1() throws -> Model { try model("AddressBook.v1.model.json") }
  static func addressBookV2() throws -> Model { try model("AddressBook.v2.model.json") }
  static func company() throws -> Model { try model("Company.model.json") }
}

/// A store in its own temporary directory.
func makeStore(_ model: Model, label: String = #function) throws -> (EventStore, String) {
  let dir = temporaryDirectory(label)
  let path = dir + "/store"
  return (try EventStore.create(at: path, model: model), dir)
}
