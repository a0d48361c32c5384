/// Reads a compiled model (`.mom`): a keyed archive of `NSManagedObjectModel`, walked by
/// hand (Foundation on Linux cannot unarchive Core Data's classes).
///
/// `NSEntities` maps names to `NSEntityDescription`s (`NSEntityName`, `NSSuperentity`,
/// `NSProperties`, `NSUserInfo`, `NSRenamingIdentifier`, `NSIsAbstract`); properties are
/// `NSAttributeDescription` (`NSAttributeType`, `NSIsOptional`, `NSDefaultValue`,
/// `NSValueTransformerName`, …), `NSRelationshipDescription` (`NSDestinationEntity`,
/// `NSInverseRelationship`, `NSMinCount`, `NSMaxCount`, `NSDeleteRule`) and fetched
/// properties. The compiler writes a renaming identifier equal to the name when none was
/// given; that one is dropped. Dictionaries are in hash order, so names are sorted.
enum CompiledModelReader {
  static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> CoreDataModel {
    let a = try KeyedArchive(bytes, file: file)
    guard a.className(a.root) == "NSManagedObjectModel" else {
      throw a.error(a.root, "the root object is a \(a.className(a.root) ?? "?"), not an NSManagedObjectModel")
    }
    let root = a.objects[a.root]
    guard let entitiesRef = a.ref(root, "NSEntities") else { return CoreDataModel() }
    let (entries, names) = try a.entities(entitiesRef)
    var model = CoreDataModel()
    for (name, n) in entries {
      model.entities.append(try entity(a, n, name: name, names: names))
    }
    if let templates = a.ref(root, "NSFetchRequestTemplates") {
      for (name, n) in try a.dictionary(templates).sorted(by: { $0.key < $1.key }) {
        let entity = a.ref(a.objects[n], "NSEntity").flatMap { names[$0] } ?? ""
        let predicate = try a.ref(a.objects[n], "NSPredicate").map { p throws(CoreDataError) in
          try a.string(a.objects[p], "NSPredicateFormat", at: p) ?? ""
        }
        model.fetchRequests.append(CoreDataFetchRequest(name: name, entity: entity, predicate: predicate))
      }
    }
    // A property archived again in a sub-entity is its parent's: keep it there only.
    let byName = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    for i in model.entities.indices {
      var inherited = Set<String>()
      var parent = model.entities[i].parent
      var hops = 0
      while let p = parent, let pe = byName[p], hops < model.entities.count {
        inherited.formUnion(pe.attributes.map(\.name) + pe.relationships.map(\.name))
        parent = pe.parent
        hops += 1
      }
      model.entities[i].attributes.removeAll { inherited.contains($0.name) }
      model.entities[i].relationships.removeAll { inherited.contains($0.name) }
    }
    model.readNotes = a.notes.list
    return model
  }

  private static func entity(_ a: KeyedArchive, _ n: Int, name: String, names: [Int: String]) throws(CoreDataError)
    -> CoreDataEntity
  {
    let x = a.objects[n]
    var e = CoreDataEntity(name: name)
    e.className = try a.string(x, "NSClassNameForEntity", at: n)
    e.parent = a.ref(x, "NSSuperentity").flatMap { names[$0] }
    e.isAbstract = try a.object(x["NSIsAbstract"], from: n)?.bool ?? false
    e.renamingIdentifier = try renaming(a, x, n, name)
    e.userInfo = try a.stringDictionary(a.ref(x, "NSUserInfo"), at: name)
    guard let props = a.ref(x, "NSProperties") else { return e }
    for (pname, p) in try a.dictionary(props).sorted(by: { $0.key < $1.key }) {
      let px = a.objects[p]
      let cls = a.className(p) ?? ""
      let optional = try a.object(px["NSIsOptional"], from: p)?.bool ?? false
      let transient = try a.object(px["NSIsTransient"], from: p)?.bool ?? false
      let userInfo = try a.stringDictionary(a.ref(px, "NSUserInfo"), at: "\(name).\(pname)")
      if cls == "NSRelationshipDescription" {
        guard let d = a.ref(px, "NSDestinationEntity"), let destination = names[d] else {
          throw a.error(p, "\(name).\(pname): a relationship without NSDestinationEntity")
        }
        var r = CoreDataRelationship(name: pname, destination: destination)
        if let inv = a.ref(px, "NSInverseRelationship") {
          r.inverse = try a.string(a.objects[inv], "NSPropertyName", at: inv)
        }
        r.minCount = Int(max(0, min(try a.object(px["NSMinCount"], from: p)?.int ?? 0, 1 << 31)))
        r.maxCount = Int(max(0, min(try a.object(px["NSMaxCount"], from: p)?.int ?? 0, 1 << 31)))
        r.isToMany = r.maxCount != 1
        r.isOrdered = try a.object(px["NSIsOrdered"], from: p)?.bool ?? false
        r.isOptional = optional
        r.isTransient = transient
        let ruleNumber = try a.object(px["NSDeleteRule"], from: p)?.int ?? 1
        guard let rule = CoreDataRelationship.deleteRule(number: ruleNumber) else {
          throw a.error(p, "\(name).\(pname): unknown delete rule \(ruleNumber)")
        }
        r.deleteRule = rule
        r.renamingIdentifier = try renaming(a, px, p, pname)
        r.userInfo = userInfo
        e.relationships.append(r)
      } else if cls.hasSuffix("AttributeDescription") {
        let number = try a.object(px["NSAttributeType"], from: p)?.int ?? 0
        guard let type = CoreDataAttributeType(number: number) else {
          throw a.error(p, "\(name).\(pname): unknown attribute type \(number)")
        }
        var attr = CoreDataAttribute(name: pname, type: type)
        attr.isOptional = optional
        attr.isTransient = transient
        if cls == "NSDerivedAttributeDescription" {
          attr.derivation =
            try a.ref(px, "NSDerivationExpression").map { d throws(CoreDataError) in
              try a.string(a.objects[d], "NSExpressionFormat", at: d) ?? ""
            } ?? ""
        }
        attr.defaultValue = try a.object(px["NSDefaultValue"], from: p).flatMap { v in
          v.text ?? v["NS.string"]?.string ?? v["NS.time"]?.text
        }
        attr.transformer = try a.string(px, "NSValueTransformerName", at: p)
        attr.renamingIdentifier = try renaming(a, px, p, pname)
        attr.isIndexed = try a.object(px["NSIsIndexed"], from: p)?.bool ?? false
        attr.userInfo = userInfo
        e.attributes.append(attr)
      } else {
        e.fetchedProperties.append(CoreDataFetchRequest(name: pname, entity: "", predicate: nil))
      }
    }
    return e
  }

  /// The renaming identifier, unless it is only the name again.
  private static func renaming(_ a: KeyedArchive, _ x: PlistValue, _ n: Int, _ name: String) throws(CoreDataError)
    -> String?
  {
    let r = try a.string(x, "NSRenamingIdentifier", at: n)
    return r == name ? nil : r
  }
}
