import EventGraph
internal import EventGraphText
import Foundation

extension MappingModel {
  /// Loads a `*.mapping.json` file.
  ///
  /// Unknown keys are errors that name the key and the file.
  public init(contentsOf path: String) throws(MappingError) {
    let bytes: [UInt8]
    do {
      bytes = try FileReading.contents(atPath: path)
    } catch {
      throw MappingError(file: path, location: "", message: error.reason)
    }
    try self.init(json: bytes, file: path)
  }

  /// Parses a mapping document.
  public init(json bytes: [UInt8], file: String = "mapping") throws(MappingError) {
    do {
      let root = try JSONObjectReader(try JSON(parsing: bytes), context: "")
      try root.rejectUnknownKeys(allowed: ["source", "destination", "entityMappings"])
      self.init(source: try root.int("source"), destination: try root.int("destination"))
      for m in try root.objects("entityMappings") {
        try m.rejectUnknownKeys(allowed: [
          "name", "source", "destination", "filter", "attributes", "relationships", "instances", "policy",
        ])
        var mapping = EntityMapping(
          name: try m.string("name"), source: try m.optionalString("source"),
          destination: try m.optionalString("destination"), filter: try m.optionalString("filter"),
          attributes: try Self.strings(m.optionalObject("attributes")), policy: try m.optionalString("policy"))
        if let rels = try m.optionalObject("relationships") {
          for f in rels.fields {
            let r = try JSONObjectReader(f.value, context: "\(rels.context).\(f.key)")
            try r.rejectUnknownKeys(allowed: ["mapping", "sources"])
            mapping.relationships[f.key] = RelationshipMapping(
              mapping: try r.string("mapping"), sources: try r.string("sources"))
          }
        }
        for i in try m.objects("instances") {
          try i.rejectUnknownKeys(allowed: ["key", "when", "attributes"])
          mapping.instances.append(
            InstanceMapping(
              key: try i.string("key"), when: try i.optionalString("when"),
              attributes: try Self.strings(i.optionalObject("attributes"))))
        }
        entityMappings.append(mapping)
      }
    } catch let e as JSONError {
      throw MappingError(file: file, location: "", message: e.description)
    } catch let e as JSONReadError {
      throw MappingError(file: file, location: e.context, message: e.message)
    } catch {
      throw MappingError(file: file, location: "", message: "\(error)")
    }
  }

  private static func strings(_ object: JSONObjectReader?) throws -> [String: String] {
    var result: [String: String] = [:]
    for f in object?.fields ?? [] {
      switch f.value {
      case .string(let s): result[f.key] = s
      // A bare number or boolean is the literal expression it spells.
      case .int(let n): result[f.key] = String(n)
      case .double, .bool: result[f.key] = f.value.serialized()
      default:
        throw JSONReadError(context: "\(object?.context ?? "").\(f.key)", message: "expected an expression string")
      }
    }
    return result
  }
}
