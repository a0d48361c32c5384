internal import EventGraphText

/// Writing `*.model.json` (FORMATS.md, "Model file"): the keys a model file reads, each
/// written only when it is not its default, `userInfo` with its keys sorted, so that one
/// model has one text.
extension Model {
  /// The model file form of this model, on one line; loading it gives an equal model.
  public var jsonText: String { json.serialized() }

  /// The model file form of this model as a JSON value.
  var json: JSON {
    var f = [
      JSONField("name", .string(name)), JSONField("version", .int(Int64(version))),
      JSONField("entities", .array(descriptions.map(Self.json))),
    ]
    Self.add(userInfo, to: &f)
    return .object(f)
  }

  private static func json(_ e: EntityDescription) -> JSON {
    var f = [JSONField("name", .string(e.name))]
    if let p = e.parent { f.append(JSONField("parent", .string(p))) }
    if e.isAbstract { f.append(JSONField("abstract", .bool(true))) }
    if let r = e.renamingIdentifier { f.append(JSONField("renamingIdentifier", .string(r))) }
    f.append(JSONField("attributes", .array(e.attributes.map(json))))
    f.append(JSONField("relationships", .array(e.relationships.map(json))))
    if !e.uniquenessConstraints.isEmpty {
      f.append(
        JSONField("uniquenessConstraints", .array(e.uniquenessConstraints.map { .array($0.map(JSON.string)) })))
    }
    if let s = e.subject { f.append(JSONField("subject", .string(s))) }
    add(e.userInfo, to: &f)
    return .object(f)
  }

  private static func json(_ a: AttributeDescription) -> JSON {
    var g = [
      JSONField("name", .string(a.name)),
      JSONField("type", .string(a.isTransformable ? "transformable" : a.type.rawValue)),
    ]
    if a.isOptional { g.append(JSONField("optional", .bool(true))) }
    if let d = a.defaultValue { g.append(JSONField("default", d.json)) }
    if let r = a.renamingIdentifier { g.append(JSONField("renamingIdentifier", .string(r))) }
    if a.isIndexed { g.append(JSONField("indexed", .bool(true))) }
    if let v = a.minValue { g.append(JSONField("minValue", v.json)) }
    if let v = a.maxValue { g.append(JSONField("maxValue", v.json)) }
    if let n = a.minLength { g.append(JSONField("minLength", .int(Int64(n)))) }
    if let n = a.maxLength { g.append(JSONField("maxLength", .int(Int64(n)))) }
    if let x = a.regularExpression { g.append(JSONField("regularExpression", .string(x))) }
    if let t = a.transformer { g.append(JSONField("transformer", .string(t))) }
    if a.isTransient { g.append(JSONField("transient", .bool(true))) }
    if a.isPersonal { g.append(JSONField("personal", .bool(true))) }
    add(a.userInfo, to: &g)
    return .object(g)
  }

  private static func json(_ r: RelationshipDescription) -> JSON {
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
    add(r.userInfo, to: &g)
    return .object(g)
  }

  /// A `userInfo` member, keys sorted, when there is any.
  private static func add(_ userInfo: [String: String], to fields: inout [JSONField]) {
    guard !userInfo.isEmpty else { return }
    let sorted = userInfo.sorted { $0.key < $1.key }
    fields.append(JSONField("userInfo", .object(sorted.map { JSONField($0.key, .string($0.value)) })))
  }
}
