import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("Query type checking")
struct QueryCheckerTests {
  static let model = QueryTestModel.model

  static let variables: [String: QueryType] = [
    "source": .object(QueryTestModel.addressBook),
    "people": .objects(QueryTestModel.addressBook),
    "limit": .value(.int64),
    "names": .values(.string),
  ]

  /// Predicates over Employee that are wrong, the error kind, and the offset of the part at fault.
  static let errors: [(text: String, kind: QueryError.Kind, offset: Int)] = [
    ("nmae == 'x'", .unknownProperty, 0),
    ("company.nmae == 'x'", .unknownProperty, 8),
    ("manager.manager.salry > 1", .unknownProperty, 16),
    ("name.size > 1", .unknownProperty, 5),
    ("$source.firsName == 'x'", .unknownProperty, 8),
    ("$nope == 1", .unknownVariable, 0),
    ("$limt == 1", .unknownVariable, 0),
    ("salary == 'x'", .typeMismatch, 7),
    ("name > 5", .typeMismatch, 5),
    ("'x' < salary", .typeMismatch, 4),
    ("name BEGINSWITH 5", .typeMismatch, 5),
    ("salary BEGINSWITH '1'", .typeMismatch, 7),
    ("salary LIKE '1*'", .typeMismatch, 7),
    ("salary ==[c] 5", .typeMismatch, 7),
    ("hired == 'yesterday'", .typeMismatch, 6),
    ("rating == TRUE", .typeMismatch, 7),
    ("manager == 'x'", .typeMismatch, 8),
    ("manager > nil", .typeMismatch, 8),
    ("name == manager", .typeMismatch, 8),
    ("'x' IN name", .typeMismatch, 7),
    ("'x' IN reports", .typeMismatch, 7),
    ("salary IN {1, 'a'}", .typeMismatch, 14),
    ("salary IN {'a'}", .typeMismatch, 7),
    ("salary BETWEEN {1, 'z'}", .typeMismatch, 7),
    ("name + 1 == 'x'", .typeMismatch, 0),
    ("1 + name == 'x'", .typeMismatch, 4),
    ("-name == 'x'", .typeMismatch, 1),
    ("hired + hired > 1", .typeMismatch, 0),
    ("salary - hired > 1", .typeMismatch, 0),
    ("uppercase(salary) == 'x'", .typeMismatch, 10),
    ("abs(name) == 1", .typeMismatch, 4),
    ("length(salary) == 1", .typeMismatch, 7),
    ("coalesce(name, salary) == 'x'", .typeMismatch, 15),
    ("$limit.x == 1", .typeMismatch, 7),
    ("ANY reports == nil", .typeMismatch, 4),
    ("reports.name == 'x'", .toManyKeyPath, 0),
    ("name == reports.name", .toManyKeyPath, 8),
    ("company.employees.salary > 1", .toManyKeyPath, 0),
    ("ANY name == 'x'", .toManyKeyPath, 4),
    ("ALL manager.name == 'x'", .toManyKeyPath, 4),
    ("reports == nil", .toManyKeyPath, 0),
    ("uppercase(reports.name) == 'X'", .toManyKeyPath, 10),
    ("reports.salary + 1 > 2", .toManyKeyPath, 0),
    ("{1, 2} + 1 == 2", .toManyKeyPath, 0),
    ("ANY reports.salary > reports.salary", .toManyKeyPath, 21),
    ("company.@count > 1", .invalidAggregate, 8),
    ("@count > 1", .invalidAggregate, 0),
    ("manager.@avg.salary > 1", .invalidAggregate, 8),
    ("reports.@sum.name > 1", .invalidAggregate, 8),
    ("reports.@avg.hired > 1", .invalidAggregate, 8),
    ("reports.@max.name == 'x'", .invalidAggregate, 8),
    ("reports.@avg > 1", .invalidAggregate, 8),
    ("reports.@count.salary > 1", .invalidAggregate, 15),
    ("reports.@sum.manager.@max.salary > 1", .invalidAggregate, 21),
    ("manager.salary.@sum > 1", .invalidAggregate, 15),
    ("name MATCHES '[a-'", .invalidRegularExpression, 13),
    ("name MATCHES[c] 'a('", .invalidRegularExpression, 16),
    ("ANY reports.name MATCHES '*'", .invalidRegularExpression, 25),
  ]

  @Test("each kind of error names its position", arguments: errors)
  func error(text: String, kind: QueryError.Kind, offset: Int) {
    let error = queryError {
      _ = try CompiledPredicate.compile(
        text, entity: QueryTestModel.employee, model: Self.model, variables: Self.variables)
    }
    #expect(error?.kind == kind, "\(String(describing: error))")
    #expect(error?.offset == offset, "\(String(describing: error))")
  }

  @Test("an unknown name comes with the nearest name")
  func suggestions() {
    let property = queryError {
      _ = try CompiledPredicate.compile("nmae == 'x'", entity: QueryTestModel.employee, model: Self.model)
    }
    #expect(property?.message.contains("did you mean 'name'") == true)
    let variable = queryError {
      _ = try CompiledPredicate.compile(
        "$sourse.phone1 == nil", entity: QueryTestModel.addressBook, model: Self.model, variables: Self.variables)
    }
    #expect(variable?.message.contains("did you mean 'source'") == true)
    let far = queryError {
      _ = try CompiledPredicate.compile("zzzzzz == 'x'", entity: QueryTestModel.employee, model: Self.model)
    }
    #expect(far?.message.contains("did you mean") == false)
  }

  @Test(
    "good predicates compile",
    arguments: [
      "name == 'x'", "salary > 1000 AND salary <= 5000.5", "bonus > 1.5", "bonus == salary", "rating BETWEEN {1, 5}",
      "hired < now()", "hired > now() - 86400", "manager == nil", "manager != nil", "manager.name BEGINSWITH[cd] 'é'",
      "manager.manager.salary > 1", "company.name LIKE 'A*'", "company.founded < hired",
      "ANY reports.salary > 100", "ALL reports.name != nil", "NONE reports.bonus < 0", "reports.@count == 0",
      "reports.@avg.salary > 1", "reports.salary.@max < 10", "reports.@sum.bonus > 1", "reports.@min.hired < now()",
      "reports.manager.@count > 1", "reports.@max.manager.salary > 1", "company.employees.@count > 1",
      "'Bob' IN reports.name", "name IN $names", "name IN {'a', 'b', nil}", "ANY reports.name IN {'a'}",
      "salary IN {1, 2.5}", "salary + bonus * 2 > rating", "-salary < 0", "abs(salary - 10) < 2",
      "concat(name, ' ', salary) != ''", "coalesce(bonus, 0) > 1", "length(name) > 3", "uppercase(name) == 'X'",
      "trim(lowercase(name)) CONTAINS 'x'", "uuid() != nil", "name MATCHES '[A-Z][a-z]+'", "name MATCHES name",
      "salary > $limit", "$source.phone1 != nil", "$source.phones.@count > 1", "ANY $source.phones.type == 1",
      "ANY $people.age > 18", "$source == nil", "$source != nil", "nil == nil", "TRUEPREDICATE", "NOT FALSEPREDICATE",
      "name > nil", "name BEGINSWITH nil", "SELF != nil", "ANY {1, 2} == salary",
    ])
  func goodPredicate(text: String) throws {
    _ = try CompiledPredicate.compile(
      text, entity: QueryTestModel.employee, model: Self.model, variables: Self.variables)
  }

  @Test(
    "expressions have result types",
    arguments: [
      ("$source.phone1", QueryType.value(.string)),
      ("$source.age", .value(.int16)),
      ("$source", .object(QueryTestModel.addressBook)),
      ("$source.phones", .objects(QueryTestModel.phoneBook)),
      ("$source.phones.phoneNumber", .values(.string)),
      ("$people.phones", .objects(QueryTestModel.phoneBook)),
      ("company", .object(QueryTestModel.company)),
      ("company.employees", .objects(QueryTestModel.employee)),
      ("reports.@avg.salary", .value(.double)),
      ("reports.@sum.salary", .value(.int64)),
      ("reports.@sum.bonus", .value(.decimal)),
      ("reports.@max.salary", .value(.int32)),
      ("reports.@count", .value(.int64)),
      ("1 + 2", .value(.int64)),
      ("7 / 2", .value(.double)),
      ("salary * 1.5", .value(.double)),
      ("bonus + 1", .value(.decimal)),
      ("hired + 60", .value(.date)),
      ("hired - hired", .value(.double)),
      ("-salary", .value(.int64)),
      ("concat(name, 1)", .value(.string)),
      ("coalesce(nil, salary, 1)", .value(.int64)),
      ("coalesce(bonus, 0)", .value(.decimal)),
      ("now()", .value(.date)),
      ("uuid()", .value(.uuid)),
      ("nil", .null),
      ("{1, 2.5}", .values(.double)),
      ("$names", .values(.string)),
      ("$limit", .value(.int64)),
    ])
  func resultType(text: String, type: QueryType) throws {
    let e = try CompiledExpression.compile(
      text, entity: QueryTestModel.employee, model: Self.model, variables: Self.variables)
    #expect(e.resultType == type)
  }

  @Test("a tree built in code compiles, and its errors have no offset")
  func treeInCode() throws {
    let good = QueryPredicate(.comparison(QueryComparison(.keyPath("salary"), .greater, .literal(.integer(1)))))
    _ = try CompiledPredicate.compile(good, entity: QueryTestModel.employee, model: Self.model)
    let bad = QueryPredicate(.comparison(QueryComparison(.keyPath("salry"), .greater, .literal(.integer(1)))))
    let error = queryError {
      _ = try CompiledPredicate.compile(bad, entity: QueryTestModel.employee, model: Self.model)
    }
    #expect(error?.kind == .unknownProperty)
    #expect(error?.offset == nil)
  }

  @Test("a tree built in code deeper than the limit is refused")
  func deepTreeInCode() {
    var p = QueryPredicate(.constant(true))
    for _ in 0..<300 { p = QueryPredicate(.not(p)) }
    let error = queryError { _ = try CompiledPredicate.compile(p, entity: QueryTestModel.employee, model: Self.model) }
    #expect(error?.kind == .tooDeep)
  }

  @Test("an entity the model lacks is an error")
  func unknownEntity() {
    let error = queryError {
      _ = try CompiledPredicate.compile("a == 1", entity: EntityID(rawValue: 99), model: Self.model)
    }
    #expect(error != nil)
  }
}
