internal import EventGraphText
import Foundation

/// Reading and writing `*.model.json` (FORMATS.md, "Model file").
extension Model {
  /// Loads and checks a model file.
  ///
  /// - Throws: ``ModelError/invalidFile(file:detail:)`` naming the file, and the line, key
  ///   or entity and property at fault; a file that cannot be read (missing, a directory,
  ///   not permitted) or that declares no entity.
  public init(contentsOf path: String) throws(ModelError) {
    let bytes: [UInt8]
    do {
      bytes = try FileReading.contents(atPath: path)
    } catch {
      throw .invalidFile(file: path, detail: error.reason)
    }
    try self.init(json: bytes, file: path)
    // A model without entities can hold nothing; as an upcast's destination it would drop
    // every object. (A store made by an earlier version with one still opens.)
    guard !entities.isEmpty else {
      throw .invalidFile(file: path, detail: "entities: a model needs at least one entity")
    }
  }

  /// Parses and checks a model document; `file` names it in errors.
  public init(json bytes: some Collection<UInt8>, file: String = "model") throws(ModelError) {
    let json: JSON
    do {
      json = try JSON(parsing: bytes)
    } catch {
      throw .invalidFile(file: file, detail: error.description)
    }
    try self.init(json: json, file: file)
  }

  /// Builds and checks a model from its JSON form.
  init(json: JSON, file: String = "model") throws(ModelError) {
    do {
      let root = try JSONObjectReader(json, context: "")
      try root.rejectUnknownKeys(allowed: ["name", "version", "entities"])
      let name = try root.string("name")
      let version = try root.int("version")
      guard version >= 1 else { throw JSONReadError(context: "version", message: "must be 1 or more") }
      var entities: [EntityDescription] = []
      for e in try root.objects("entities") { entities.append(try Self.entity(e)) }
      do {
        try self.init(name: name, version: version, entities: entities)
      } catch {
        throw ModelError.invalidFile(file: file, detail: "\(error)")
      }
    } catch let e as JSONReadError {
      throw .invalidFile(file: file, detail: e.description)
    } catch let e as ModelError {
      throw e
    } catch {
      throw .invalidFile(file: file, detail: "\(error)")
    }
  }

  private static func entity(_ r: JSONObjectReader) throws -> EntityDescription {
    try r.rejectUnknownKeys(allowed: [
      "name", "attributes", "relationships", "parent", "abstract", "renamingIdentifier",
    ])
    var e = EntityDescription(
      name: try r.string("name"), parent: try r.optionalString("parent"),
      isAbstract: try r.bool("abstract", default: false), renamingIdentifier: try r.optionalString("renamingIdentifier")
    )
    for a in try r.objects("attributes") {
      try a.rejectUnknownKeys(allowed: ["name", "type", "optional", "default", "renamingIdentifier", "indexed"])
      // The messages name the property as well as its place: `entities[0].attributes[2]`
      // alone sends the reader counting.
      let name = try a.string("name")
      let typeName = try a.string("type")
      guard let type = AttributeType(rawValue: typeName) else {
        throw JSONReadError(
          context: a.context + ".type",
          message:
            "\(e.name).\(name): unknown type '\(typeName)' (one of \(AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))"
        )
      }
      var defaultValue: Value? = nil
      if let d = a.optionalValue("default") {
        do {
          defaultValue = try Value.fromJSON(d, as: type)
        } catch {
          throw JSONReadError(context: a.context + ".default", message: "\(e.name).\(name): \(error.description)")
        }
      }
      e.attributes.append(
        AttributeDescription(
          name: name, type: type, isOptional: try a.bool("optional", default: false),
          defaultValue: defaultValue, renamingIdentifier: try a.optionalString("renamingIdentifier"),
          isIndexed: try a.bool("indexed", default: false)))
    }
    for x in try r.objects("relationships") {
      try x.rejectUnknownKeys(allowed: [
        "name", "destination", "toMany", "ordered", "optional", "minCount", "maxCount", "inverse", "deleteRule",
        "renamingIdentifier", "copy",
      ])
      let name = try x.string("name")
      let ruleName = try x.optionalString("deleteRule") ?? "nullify"
      guard let rule = DeleteRule(rawValue: ruleName) else {
        throw JSONReadError(
          context: x.context + ".deleteRule",
          message: "\(e.name).\(name): unknown deleteRule '\(ruleName)' (nullify, cascade, deny, noAction)")
      }
      var copy: CopyPolicy? = nil
      if let c = try x.optionalString("copy") {
        guard let p = CopyPolicy(rawValue: c) else {
          throw JSONReadError(
            context: x.context + ".copy",
            message: "\(e.name).\(name): unknown copy policy '\(c)' (deep, reference, skip)")
        }
        copy = p
      }
      e.relationships.append(
        RelationshipDescription(
          name: name, destination: try x.string("destination"),
          isToMany: try x.bool("toMany", default: false), isOrdered: try x.bool("ordered", default: false),
          isOptional: try x.bool("optional", default: true), minCount: try x.optionalInt("minCount"),
          maxCount: try x.optionalInt("maxCount"), inverse: try x.optionalString("inverse"), deleteRule: rule,
          renamingIdentifier: try x.optionalString("renamingIdentifier"), copyPolicy: copy))
    }
    return e
  }

  /// The model file form of this model, on one line; loading it gives an equal model.
  public var jsonText: String { json.serialized() }

  /// The model file form of this model as a JSON value.
  var json: JSON {
    .object([
      JSONField("name", .string(name)), JSONField("version", .int(Int64(version))),
      JSONField("entities", .array(descriptions.map(Self.json))),
    ])
  }

  private static func json(_ e: EntityDescription) -> JSON {
    var f = [JSONField("name", .string(e.name))]
    if let p = e.parent { f.append(JSONField("parent", .string(p))) }
    if e.isAbstract { f.append(JSONField("abstract", .bool(true))) }
    if let r = e.renamingIdentifier { f.append(JSONField("renamingIdentifier", .string(r))) }
    f.append(
      JSONField(
        "attributes",
        .array(
          e.attributes.map { a in
            var g = [JSONField("name", .string(a.name)), JSONField("type", .string(a.type.rawValue))]
            if a.isOptional { g.append(JSONField("optional", .bool(true))) }
            if let d = a.defaultValue { g.append(JSONField("default", d.json)) }
            if let r = a.renamingIdentifier { g.append(JSONField("renamingIdentifier", .string(r))) }
            if a.isIndexed { g.append(JSONField("indexed", .bool(true))) }
            return .object(g)
          })))
    f.append(
      JSONField(
        "relationships",
        .array(
          e.relationships.map { r in
            var g = [JSONField("name", .string(r.name)), JSONField("destination", .string(r.destination))]
            if r.isToMany { g.append(JSONField("toMany", .bool(true))) }
            if r.isOrdered { g.append(JSONField("ordered", .bool(true))) }
            if !r.isOptional { g.append(JSONField("optional", .bool(false))) }
            if let n = r.minCount { g.append(JSONField("minCount", .int(Int64(n)))) }
            if let n = r.maxCount { g.append(JSONField("maxCount", .int(Int64(n)))) }
            if let i = r.inverse { g.append(JSONField("inverse", .string(i))) }
            if r.deleteRule != .nullify { g.append(JSONField("deleteRule", .string(r.deleteRule.rawValue))) }
            if let x = r.renamingIdentifier { g.append(JSONField("renamingIdentifier", .string(x))) }
            if let c = r.copyPolicy { g.append(JSONField("copy", .string(c.rawValue))) }
            return .object(g)
          })))
    return .object(f)
  }
}
