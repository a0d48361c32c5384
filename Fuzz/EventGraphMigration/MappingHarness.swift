// Compiled into the EventGraphMigration module by Tools/fuzz only. See
// Docs/reliability.md, "Fuzzing".
import EventGraph

enum MappingFuzz {
  /// The AddressBook models of Docs/examples, versions 1 and 2, that the mapping harness
  /// compiles mappings between.
  static let models: (Model, Model) = {
    let v1 = """
      {"name": "AddressBook", "version": 1, "entities": [
        {"name": "AddressBook", "attributes": [
          {"name": "firstName", "type": "string"}, {"name": "lastName", "type": "string"},
          {"name": "phone1", "type": "string", "optional": true},
          {"name": "phone2", "type": "string", "optional": true}]}]}
      """
    let v2 = """
      {"name": "AddressBook", "version": 2, "entities": [
        {"name": "AddressBook", "attributes": [
          {"name": "firstName", "type": "string"}, {"name": "lastName", "type": "string"},
          {"name": "age", "type": "int16", "optional": true}],
         "relationships": [{"name": "phones", "destination": "PhoneBook", "toMany": true, "inverse": "addressBook",
           "deleteRule": "cascade"}]},
        {"name": "PhoneBook", "attributes": [
          {"name": "phoneNumber", "type": "string"}, {"name": "type", "type": "int16", "default": 0}],
         "relationships": [{"name": "addressBook", "destination": "AddressBook", "inverse": "phones"}]}]}
      """
    do {
      return (try Model(json: Array(v1.utf8), file: "v1"), try Model(json: Array(v2.utf8), file: "v2"))
    } catch {
      fatalError("the mapping harness's models do not load: \(error)")
    }
  }()

  /// The mapping file loader and compiler.
  ///
  /// The loader (`MappingModel(json:)`) and the compiler
  /// (``CompiledMapping``: names resolved, predicates and expressions checked, what is not
  /// written inferred) between AddressBook v1 and v2. Errors are clean refusals.
  static func mapping(_ data: UnsafeRawBufferPointer) {
    guard let mapping = try? MappingModel(json: [UInt8](data), file: "fuzz") else { return }
    let (v1, v2) = models
    _ = try? CompiledMapping(mapping, from: v1, to: v2, file: "fuzz")
    _ = try? CompiledMapping(mapping, from: v2, to: v1, file: "fuzz")
  }
}
