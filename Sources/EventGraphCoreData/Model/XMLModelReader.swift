/// Reads the XML `contents` of an `.xcdatamodel` (Xcode 4 and later).
enum XMLModelReader {
  static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> CoreDataModel {
    let root = try XMLTree.document(bytes, root: "model", what: "a Core Data model", file: file)
    var model = CoreDataModel()
    model.userInfo = try userInfo(root, file)
    for e in root.children {
      switch e.name {
      case "entity": model.entities.append(try entity(e, file))
      case "fetchRequest": model.fetchRequests.append(try fetchRequest(e, file))
      case "configuration":
        model.configurations.append(
          (try required(e, "name", file), e.children("memberEntity").compactMap { $0.attributes["name"] }))
      default: break  // <elements> (diagram positions) and <userInfo>, read above
      }
    }
    return model
  }

  private static func entity(_ x: XMLTree, _ file: String) throws(CoreDataError) -> CoreDataEntity {
    var e = CoreDataEntity(name: try required(x, "name", file))
    e.className = x.attributes["representedClassName"]
    e.parent = x.attributes["parentEntity"]
    e.isAbstract = x.attributes["isAbstract"] == "YES"
    e.renamingIdentifier = x.attributes["elementID"]
    e.userInfo = try userInfo(x, file)
    for c in x.children {
      switch c.name {
      case "attribute": e.attributes.append(try attribute(c, in: e.name, file))
      case "relationship": e.relationships.append(try relationship(c, in: e.name, file))
      case "fetchedProperty":
        let name = try required(c, "name", file)
        let request = c.child("fetchRequest")
        e.fetchedProperties.append(
          CoreDataFetchRequest(
            name: name, entity: request?.attributes["entity"] ?? "", predicate: request?.attributes["predicateString"]))
      case "uniquenessConstraints":
        for u in c.children("uniquenessConstraint") {
          e.uniquenessConstraints.append(u.children("constraint").compactMap { $0.attributes["value"] })
        }
      case "fetchIndex":
        e.fetchIndexes.append(
          (try required(c, "name", file), c.children("fetchIndexElement").compactMap { $0.attributes["property"] }))
      default: break
      }
    }
    return e
  }

  private static func attribute(_ x: XMLTree, in entity: String, _ file: String) throws(CoreDataError)
    -> CoreDataAttribute
  {
    let name = try required(x, "name", file)
    let typeName = x.attributes["attributeType"] ?? "Undefined"
    guard let type = CoreDataAttributeType(rawValue: typeName) else {
      throw CoreDataError(
        file: file, "line \(x.line): \(entity).\(name): unknown attributeType '\(typeName)'")
    }
    var a = CoreDataAttribute(name: name, type: type)
    a.isOptional = x.attributes["optional"] == "YES"
    a.isTransient = x.attributes["transient"] == "YES"
    a.derivation = x.attributes["derived"] == "YES" ? (x.attributes["derivationExpression"] ?? "") : nil
    a.defaultValue = type == .date ? x.attributes["defaultDateTimeInterval"] : x.attributes["defaultValueString"]
    a.minValue = type == .date ? x.attributes["minDateTimeInterval"] : x.attributes["minValueString"]
    a.maxValue = type == .date ? x.attributes["maxDateTimeInterval"] : x.attributes["maxValueString"]
    a.regularExpression = x.attributes["regularExpressionString"]
    a.transformer = x.attributes["valueTransformerName"]
    a.customClassName = x.attributes["customClassName"]
    a.renamingIdentifier = x.attributes["elementID"]
    a.isIndexed = x.attributes["indexed"] == "YES"
    a.userInfo = try userInfo(x, file)
    return a
  }

  private static func relationship(_ x: XMLTree, in entity: String, _ file: String) throws(CoreDataError)
    -> CoreDataRelationship
  {
    let name = try required(x, "name", file)
    guard let destination = x.attributes["destinationEntity"] else {
      throw CoreDataError(file: file, "line \(x.line): \(entity).\(name): relationship without destinationEntity")
    }
    var r = CoreDataRelationship(name: name, destination: destination)
    r.inverse = x.attributes["inverseName"]
    r.isToMany = x.attributes["toMany"] == "YES"
    r.isOrdered = x.attributes["ordered"] == "YES"
    r.isOptional = x.attributes["optional"] == "YES"
    r.isTransient = x.attributes["transient"] == "YES"
    r.minCount = try count(x, "minCount", entity, name, file)
    r.maxCount = try count(x, "maxCount", entity, name, file)
    let rule = x.attributes["deletionRule"] ?? "Nullify"
    guard let eventGraphRule = CoreDataRelationship.deleteRule(xml: rule) else {
      throw CoreDataError(file: file, "line \(x.line): \(entity).\(name): unknown deletionRule '\(rule)'")
    }
    r.deleteRule = eventGraphRule
    r.renamingIdentifier = x.attributes["elementID"]
    r.userInfo = try userInfo(x, file)
    return r
  }

  private static func fetchRequest(_ x: XMLTree, _ file: String) throws(CoreDataError) -> CoreDataFetchRequest {
    CoreDataFetchRequest(
      name: try required(x, "name", file), entity: x.attributes["entity"] ?? "",
      predicate: x.attributes["predicateString"])
  }

  private static func count(_ x: XMLTree, _ key: String, _ entity: String, _ name: String, _ file: String)
    throws(CoreDataError) -> Int
  {
    guard let text = x.attributes[key] else { return 0 }
    guard let n = Int(text), n >= 0 else {
      throw CoreDataError(file: file, "line \(x.line): \(entity).\(name): \(key) '\(text)' is not a count")
    }
    return n
  }

  private static func userInfo(_ x: XMLTree, _ file: String) throws(CoreDataError) -> [String: String] {
    var result: [String: String] = [:]
    for u in x.children("userInfo") {
      for entry in u.children("entry") {
        guard let k = entry.attributes["key"] else {
          throw CoreDataError(file: file, "line \(entry.line): a userInfo entry without key")
        }
        result[k] = entry.attributes["value"] ?? ""
      }
    }
    return result
  }

  private static func required(_ x: XMLTree, _ key: String, _ file: String) throws(CoreDataError) -> String {
    guard let v = x.attributes[key], !v.isEmpty else {
      throw CoreDataError(file: file, "line \(x.line): <\(x.name)> without \(key)")
    }
    return v
  }
}
