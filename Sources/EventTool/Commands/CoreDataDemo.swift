internal import EventGraphText
import Foundation

/// `eventtool demo --coredata`: the seed's story from its own Core Data files.
enum CoreDataDemo {
  /// The seed's sample project, as the repository keeps it (public test data).
  static let defaultFiles = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/EventGraphCoreDataTests/Fixtures/MyMigration").path

  static func run(_ demo: DemoRunner, files: String) throws {
    let dir = demo.dir
    let model = files + "/MyMigration_DataModel.xcdatamodeld"
    guard FileManager.default.fileExists(atPath: model) else {
      throw ToolError.failed(
        "\(files): the seed's Core Data files are not there (MyMigration_DataModel.xcdatamodeld, v1_storedata, v1_to_v2.xcmappingmodel); pass --files DIR"
      )
    }
    let store = dir + "/book.store"
    demo.step("1. The seed's model, both versions, from Xcode 3's binary files (v2 is the current version).")
    try demo.run(["import-model", model, "--out", dir + "/models"])
    demo.step("2. The seed's v1 XML store (its three people) into a new store; the version that fits is found.")
    try demo.run(["import-coredata", store, files + "/v1_storedata", "--model", model])
    try demo.run(["export", store])
    demo.step("3. The seed's mapping model. Its AddressBookToPhoneBook mapping names a custom policy class.")
    let imported = dir + "/v1-v2.mapping.json"
    try demo.run(["import-mapping", files + "/v1_to_v2.xcmappingmodel", "--out", imported])
    demo.step("4. The class's work (one PhoneBook per phone), written as the mapping's declarative split instead:")
    let split = dir + "/v1-v2.split.mapping.json"
    let text = try withSplit(try String(contentsOfFile: imported, encoding: .utf8))
    try text.write(toFile: split, atomically: true, encoding: .utf8)
    demo.io.print(text.trimmingCharacters(in: .newlines))
    demo.step("5. Upcast to v2 with it.")
    try demo.run(["upcast", store, "--model", dir + "/models/MyMigration_DataModel.v2.model.json", "--mapping", split])
    demo.step("6. The PhoneBook list, as the seed's post printed it:")
    try demo.run(["export", store, "--entity", "PhoneBook"])
    for line in try DemoRunner.phoneList(store) { demo.io.print(line) }
    try demo.run(["verify", store])
  }

  /// The imported mapping with the custom policy replaced by the seed's split: a landline
  /// (type 1) from `phone1`, a mobile (type 2) from `phone2`.
  static func withSplit(_ mapping: String) throws -> String {
    let json = try JSON(parsing: Array(mapping.utf8))
    guard case .object(var root) = json, let i = root.firstIndex(where: { $0.key == "entityMappings" }),
      case .array(var list) = root[i].value
    else { throw ToolError.failed("the imported mapping has no entityMappings") }
    for (k, m) in list.enumerated() {
      guard case .object(var fields) = m, m["policy"] == .string("AddressBookToPhoneBook") else { continue }
      fields.removeAll { $0.key == "policy" }
      func entry(_ key: String, _ phone: String, _ type: Int64) -> JSON {
        .object([
          JSONField("key", .string(key)), JSONField("when", .string("\(phone) != nil AND \(phone) != ''")),
          JSONField(
            "attributes",
            .object([JSONField("phoneNumber", .string("$source.\(phone)")), JSONField("type", .int(type))])),
        ])
      }
      fields.append(JSONField("instances", .array([entry("landline", "phone1", 1), entry("mobile", "phone2", 2)])))
      list[k] = .object(fields)
    }
    root[i].value = .array(list)
    return JSON.object(root).serialized(pretty: true) + "\n"
  }
}
