internal import EventGraphText
import Foundation

/// Reading and writing `*.model.json` (FORMATS.md, "Model file").
extension Model {
  /// Loads and checks a model file.
  ///
  /// - Throws: ``ModelError``: `invalidFile` naming the file, and the line or key at fault,
  ///   for a file that cannot be read (missing, a directory, not permitted), is not a model
  ///   document or declares no entity; a model that breaks a rule keeps the rule's code, with
  ///   the file, entity and property in its context.
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
      try root.rejectUnknownKeys(allowed: ["name", "version", "entities", "userInfo"])
      let name = try root.string("name")
      let version = try root.int("version")
      guard version >= 1 else { throw JSONReadError(context: "version", message: "must be 1 or more") }
      var entities: [EntityDescription] = []
      for e in try root.objects("entities") { entities.append(try Self.entity(e)) }
      do {
        try self.init(name: name, version: version, entities: entities, userInfo: try root.stringMap("userInfo"))
      } catch let e as ModelError {
        // The fault keeps its code; the file is named in its context.
        throw e.inFile(file)
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
      "name", "attributes", "relationships", "parent", "abstract", "renamingIdentifier", "uniquenessConstraints",
      "subject", "userInfo",
    ])
    var e = EntityDescription(
      name: try r.string("name"), parent: try r.optionalString("parent"),
      isAbstract: try r.bool("abstract", default: false),
      renamingIdentifier: try r.optionalString("renamingIdentifier"),
      uniquenessConstraints: try r.stringArrays("uniquenessConstraints"), subject: try r.optionalString("subject"),
      userInfo: try r.stringMap("userInfo")
    )
    for a in try r.objects("attributes") { e.attributes.append(try attribute(a, of: e.name)) }
    for x in try r.objects("relationships") {
      try x.rejectUnknownKeys(allowed: [
        "name", "destination", "toMany", "ordered", "optional", "minCount", "maxCount", "inverse", "deleteRule",
        "renamingIdentifier", "copy", "userInfo",
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
          renamingIdentifier: try x.optionalString("renamingIdentifier"), copyPolicy: copy,
          userInfo: try x.stringMap("userInfo")))
    }
    return e
  }

  /// The names a model file gives attribute types: ``AttributeType``'s and `transformable`.
  static let typeNames = AttributeType.allCases.map(\.rawValue) + ["transformable"]

  private static func attribute(_ a: JSONObjectReader, of entity: String) throws -> AttributeDescription {
    try a.rejectUnknownKeys(allowed: [
      "name", "type", "optional", "default", "renamingIdentifier", "indexed", "minValue", "maxValue", "minLength",
      "maxLength", "regularExpression", "transformer", "transient", "personal", "userInfo",
    ])
    // The messages name the property as well as its place: `entities[0].attributes[2]`
    // alone sends the reader counting.
    let name = try a.string("name")
    let typeName = try a.string("type")
    let isTransformable = typeName == "transformable"
    guard let type = isTransformable ? .binary : AttributeType(rawValue: typeName) else {
      throw JSONReadError(
        context: a.context + ".type",
        message: "\(entity).\(name): unknown type '\(typeName)' (one of \(typeNames.joined(separator: ", ")))")
    }
    func value(_ key: String) throws -> Value? {
      guard let v = a.optionalValue(key) else { return nil }
      do {
        return try Value.fromJSON(v, as: type)
      } catch {
        throw JSONReadError(context: a.context + "." + key, message: "\(entity).\(name): \(error.description)")
      }
    }
    return AttributeDescription(
      name: name, type: type, isOptional: try a.bool("optional", default: false),
      defaultValue: try value("default"), renamingIdentifier: try a.optionalString("renamingIdentifier"),
      isIndexed: try a.bool("indexed", default: false), minValue: try value("minValue"),
      maxValue: try value("maxValue"), minLength: try a.optionalInt("minLength"),
      maxLength: try a.optionalInt("maxLength"), regularExpression: try a.optionalString("regularExpression"),
      isTransformable: isTransformable, transformer: try a.optionalString("transformer"),
      isTransient: try a.bool("transient", default: false), isPersonal: try a.bool("personal", default: false),
      userInfo: try a.stringMap("userInfo"))
  }
}
