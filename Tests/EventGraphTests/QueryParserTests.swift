import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("Query parser")
struct QueryParserTests {
  /// Valid predicates and their canonical printing.
  static let valid: [(text: String, canonical: String)] = [
    (#"phone1 != nil || phone2 != nil"#, #"phone1 != nil OR phone2 != nil"#),
    (#"phone1 != nil AND phone1 != ''"#, #"phone1 != nil AND phone1 != """#),
    (#"firstName == 'Taro'"#, #"firstName == "Taro""#),
    (#"firstName = "Taro""#, #"firstName == "Taro""#),
    (#"firstName != 'x'"#, #"firstName != "x""#),
    (#"firstName <> 'x'"#, #"firstName != "x""#),
    (#"age < 18"#, #"age < 18"#),
    (#"age <= 18"#, #"age <= 18"#),
    (#"age =< 18"#, #"age <= 18"#),
    (#"age > 18"#, #"age > 18"#),
    (#"age >= 18"#, #"age >= 18"#),
    (#"age => 18"#, #"age >= 18"#),
    (#"a == 1 and b == 2"#, #"a == 1 AND b == 2"#),
    (#"a == 1 AND b == 2 AND c == 3"#, #"a == 1 AND b == 2 AND c == 3"#),
    (#"a == 1 && b == 2"#, #"a == 1 AND b == 2"#),
    (#"a == 1 or b == 2"#, #"a == 1 OR b == 2"#),
    (#"a == 1 OR b == 2 OR c == 3"#, #"a == 1 OR b == 2 OR c == 3"#),
    (#"a == 1 || b == 2"#, #"a == 1 OR b == 2"#),
    (#"NOT a == 1"#, #"NOT a == 1"#),
    (#"not a == 1"#, #"NOT a == 1"#),
    (#"!a == 1"#, #"NOT a == 1"#),
    (#"! (a == 1)"#, #"NOT a == 1"#),
    (#"NOT NOT a == 1"#, #"NOT NOT a == 1"#),
    (#"NOT (a == 1 AND b == 2)"#, #"NOT (a == 1 AND b == 2)"#),
    (#"NOT (a == 1 OR b == 2)"#, #"NOT (a == 1 OR b == 2)"#),
    (#"a == 1 OR b == 2 AND c == 3"#, #"a == 1 OR b == 2 AND c == 3"#),
    (#"(a == 1 OR b == 2) AND c == 3"#, #"(a == 1 OR b == 2) AND c == 3"#),
    (#"a == 1 AND (b == 2 OR c == 3)"#, #"a == 1 AND (b == 2 OR c == 3)"#),
    (#"(a == 1 AND b == 2) AND c == 3"#, #"(a == 1 AND b == 2) AND c == 3"#),
    (#"a == 1 AND (b == 2 AND c == 3)"#, #"a == 1 AND (b == 2 AND c == 3)"#),
    (#"(a == 1 OR b == 2) OR c == 3"#, #"(a == 1 OR b == 2) OR c == 3"#),
    (#"((a == 1))"#, #"a == 1"#),
    (#"(((a == 1)) AND ((b == 2)))"#, #"a == 1 AND b == 2"#),
    (#"NOT a == 1 AND b == 2"#, #"NOT a == 1 AND b == 2"#),
    (#"NOT (NOT a == 1)"#, #"NOT NOT a == 1"#),
    (#"TRUEPREDICATE"#, #"TRUEPREDICATE"#),
    (#"FALSEPREDICATE"#, #"FALSEPREDICATE"#),
    (#"truepredicate"#, #"TRUEPREDICATE"#),
    (#"TRUEPREDICATE AND FALSEPREDICATE"#, #"TRUEPREDICATE AND FALSEPREDICATE"#),
    (#"NOT TRUEPREDICATE"#, #"NOT TRUEPREDICATE"#),
    (#"company.name == 'Acme'"#, #"company.name == "Acme""#),
    (#"manager.manager.name == 'Boss'"#, #"manager.manager.name == "Boss""#),
    (#"employees.@count > 3"#, #"employees.@count > 3"#),
    (#"employees.@avg.salary >= 1000"#, #"employees.@avg.salary >= 1000"#),
    (#"employees.@sum.salary < 1e6"#, #"employees.@sum.salary < 1000000.0"#),
    (#"employees.@min.salary == 0"#, #"employees.@min.salary == 0"#),
    (#"employees.@max.salary != 0"#, #"employees.@max.salary != 0"#),
    (#"employees.salary.@sum > 10"#, #"employees.salary.@sum > 10"#),
    (#"@count.x == 1"#, #"@count.x == 1"#),
    (#"$source.phone1 != nil"#, #"$source.phone1 != nil"#),
    (#"$source == nil"#, #"$source == nil"#),
    (#"$source.employees.@count == 0"#, #"$source.employees.@count == 0"#),
    (#"SELF == nil"#, #"SELF == nil"#),
    (#"self.name == 'x'"#, #"name == "x""#),
    (#"x == $limit"#, #"x == $limit"#),
    (#"'text' == "text""#, #""text" == "text""#),
    (#"s == 'it\'s'"#, #"s == "it's""#),
    (#"s == "say \"hi\"""#, #"s == "say \"hi\"""#),
    (#"s == 'tab\there'"#, #"s == "tab\there""#),
    (#"s == 'line\nbreak'"#, #"s == "line\nbreak""#),
    (#"s == 'back\\slash'"#, #"s == "back\\slash""#),
    (#"s == 'nul\0'"#, #"s == "nul\0""#),
    (#"s == 'a\qb'"#, #"s == "a\\qb""#),
    (#"s MATCHES '\d+\.\d*'"#, #"s MATCHES "\\d+\\.\\d*""#),
    (#"s == '\u00e9'"#, #"s == "é""#),
    (#"s == '\u{1F600}'"#, #"s == "😀""#),
    (#"s == 'é'"#, #"s == "é""#),
    (#"s == '桃太郎'"#, #"s == "桃太郎""#),
    (#"s == ''"#, #"s == """#),
    (#"s == """#, #"s == """#),
    (#"i == 0"#, #"i == 0"#),
    (#"i == 42"#, #"i == 42"#),
    (#"i == -42"#, #"i == -42"#),
    (#"i == 9223372036854775807"#, #"i == 9223372036854775807"#),
    (#"i == -9223372036854775808"#, #"i == -9223372036854775808"#),
    (#"i == 0x1F"#, #"i == 31"#),
    (#"i == 0XFF"#, #"i == 255"#),
    (#"i == 0b101"#, #"i == 5"#),
    (#"i == 0o17"#, #"i == 15"#),
    (#"d == 1.5"#, #"d == 1.5"#),
    (#"d == -1.5"#, #"d == -1.5"#),
    (#"d == 0.0"#, #"d == 0.0"#),
    (#"d == 2.0"#, #"d == 2.0"#),
    (#"d == 1e3"#, #"d == 1000.0"#),
    (#"d == 1E-3"#, #"d == 0.001"#),
    (#"d == 1.5e+2"#, #"d == 150.0"#),
    (#"d == 123456789.125"#, #"d == 123456789.125"#),
    (#"x == nil"#, #"x == nil"#),
    (#"x == NULL"#, #"x == nil"#),
    (#"x == Nil"#, #"x == nil"#),
    (#"x == TRUE"#, #"x == TRUE"#),
    (#"x == true"#, #"x == TRUE"#),
    (#"x == YES"#, #"x == TRUE"#),
    (#"x == FALSE"#, #"x == FALSE"#),
    (#"x == no"#, #"x == FALSE"#),
    (#"x != nil"#, #"x != nil"#),
    (#"name BEGINSWITH 'Ta'"#, #"name BEGINSWITH "Ta""#),
    (#"name beginswith[c] 'ta'"#, #"name BEGINSWITH[c] "ta""#),
    (#"name ENDSWITH[d] 'e'"#, #"name ENDSWITH[d] "e""#),
    (#"name CONTAINS[cd] 'é'"#, #"name CONTAINS[cd] "é""#),
    (#"name CONTAINS[DC] 'x'"#, #"name CONTAINS[cd] "x""#),
    (#"name LIKE 'T*o'"#, #"name LIKE "T*o""#),
    (#"name LIKE[c] '?aro'"#, #"name LIKE[c] "?aro""#),
    (#"name MATCHES '[A-Z][a-z]+'"#, #"name MATCHES "[A-Z][a-z]+""#),
    (#"name MATCHES[c] 'ta.*'"#, #"name MATCHES[c] "ta.*""#),
    (#"name ==[c] 'taro'"#, #"name ==[c] "taro""#),
    (#"name !=[cd] 'taro'"#, #"name !=[cd] "taro""#),
    (#"name <[c] 'm'"#, #"name <[c] "m""#),
    (#"age IN {1, 2, 3}"#, #"age IN {1, 2, 3}"#),
    (#"age in {}"#, #"age IN {}"#),
    (#"name IN {'a', "b", 'c'}"#, #"name IN {"a", "b", "c"}"#),
    (#"'Bob' IN employees.name"#, #""Bob" IN employees.name"#),
    (#"x IN $list"#, #"x IN $list"#),
    (#"age BETWEEN {18, 65}"#, #"age BETWEEN {18, 65}"#),
    (#"age between {-1, 1}"#, #"age BETWEEN {-1, 1}"#),
    (#"d BETWEEN {0.5, 1.5}"#, #"d BETWEEN {0.5, 1.5}"#),
    (#"name BETWEEN[c] {'a', 'm'}"#, #"name BETWEEN[c] {"a", "m"}"#),
    (#"ANY employees.salary > 100"#, #"ANY employees.salary > 100"#),
    (#"SOME employees.salary > 100"#, #"ANY employees.salary > 100"#),
    (#"ALL employees.salary > 100"#, #"ALL employees.salary > 100"#),
    (#"NONE employees.salary > 100"#, #"NONE employees.salary > 100"#),
    (#"any employees.name BEGINSWITH 'A'"#, #"ANY employees.name BEGINSWITH "A""#),
    (#"ANY employees.name IN {'a', 'b'}"#, #"ANY employees.name IN {"a", "b"}"#),
    (#"ALL employees.salary BETWEEN {1, 2}"#, #"ALL employees.salary BETWEEN {1, 2}"#),
    (#"NOT ANY employees.salary > 100"#, #"NOT ANY employees.salary > 100"#),
    (#"a + 1 == 2"#, #"a + 1 == 2"#),
    (#"a - 1 == 2"#, #"a - 1 == 2"#),
    (#"a * 2 == 4"#, #"a * 2 == 4"#),
    (#"a / 2 == 1"#, #"a / 2 == 1"#),
    (#"a + b * c == d"#, #"a + b * c == d"#),
    (#"(a + b) * c == d"#, #"(a + b) * c == d"#),
    (#"a - b - c == 0"#, #"a - b - c == 0"#),
    (#"a - (b - c) == 0"#, #"a - (b - c) == 0"#),
    (#"a + (b + c) == 0"#, #"a + (b + c) == 0"#),
    (#"a * b / c == 1"#, #"a * b / c == 1"#),
    (#"a * (b / c) == 1"#, #"a * (b / c) == 1"#),
    (#"a / (b * c) == 1"#, #"a / (b * c) == 1"#),
    (#"-a == 1"#, #"-a == 1"#),
    (#"- a == 1"#, #"-a == 1"#),
    (#"-(a) == 1"#, #"-a == 1"#),
    (#"-(a + b) == 1"#, #"-(a + b) == 1"#),
    (#"--a == 1"#, #"-(-a) == 1"#),
    (#"-(-1) == 1"#, #"-(-1) == 1"#),
    (#"- -1 == 1"#, #"-(-1) == 1"#),
    (#"a - -1 == 0"#, #"a - -1 == 0"#),
    (#"a * -2 == 0"#, #"a * -2 == 0"#),
    (#"-1 * a == 0"#, #"-1 * a == 0"#),
    (#"-(1) == -1"#, #"-(1) == -1"#),
    (#"(1 + 2) * (3 - 4) == -1"#, #"(1 + 2) * (3 - 4) == -1"#),
    (#"-abs(x) == 1"#, #"-abs(x) == 1"#),
    (#"uppercase(name) == 'TARO'"#, #"uppercase(name) == "TARO""#),
    (#"UPPERCASE(name) == 'TARO'"#, #"uppercase(name) == "TARO""#),
    (#"lowercase(name) == 'taro'"#, #"lowercase(name) == "taro""#),
    (#"trim(name) == 'x'"#, #"trim(name) == "x""#),
    (#"concat(firstName, ' ', lastName) == 'Taro Yamada'"#, #"concat(firstName, " ", lastName) == "Taro Yamada""#),
    (#"coalesce(phone1, phone2, '') != ''"#, #"coalesce(phone1, phone2, "") != """#),
    (#"now() > dt"#, #"now() > dt"#),
    (#"uuid() != u"#, #"uuid() != u"#),
    (#"length(name) > 3"#, #"length(name) > 3"#),
    (#"abs(x - 10) < 2"#, #"abs(x - 10) < 2"#),
    (#"concat(uppercase(a), lowercase(b)) == 'Xy'"#, #"concat(uppercase(a), lowercase(b)) == "Xy""#),
    (#"#in == 1"#, #"#in == 1"#),
    (#"#AND.#OR == 1"#, #"#AND.#OR == 1"#),
    (#"a.#self == 2"#, #"a.#self == 2"#),
    (#"a == 1 AND #not == 2"#, #"a == 1 AND #not == 2"#),
    (#"  a  ==  1  "#, #"a == 1"#),
    (#"a==1&&b==2||!c==3"#, #"a == 1 AND b == 2 OR NOT c == 3"#),
    (#"age>=18"#, #"age >= 18"#),
    (#"x == {1, 2}"#, #"x == {1, 2}"#),
    (#"{1, 2} == x"#, #"{1, 2} == x"#),
    (#"x + 1 IN {1, 2}"#, #"x + 1 IN {1, 2}"#),
    (#"length(concat(a, b)) BETWEEN {1, 10}"#, #"length(concat(a, b)) BETWEEN {1, 10}"#),
    (#"x IN {1 + 1, -2, abs(-3)}"#, #"x IN {1 + 1, -2, abs(-3)}"#),
    (#"phone1 == 'ü' OR phone2 ENDSWITH 'x'"#, #"phone1 == "ü" OR phone2 ENDSWITH "x""#),
    (#"x == {1, 2} + 1"#, #"x == {1, 2} + 1"#),
  ]

  /// Invalid predicates, the 0-based character offset of the error, and part of its message.
  static let invalid: [(text: String, offset: Int, message: String)] = [
    (#""#, 0, #"expected an expression"#),
    (#"   "#, 3, #"expected an expression"#),
    (#"a"#, 1, #"expected a comparison operator"#),
    (#"a =="#, 4, #"expected an expression"#),
    (#"== 1"#, 0, #"expected an expression"#),
    (#"a == 1 AND"#, 10, #"expected an expression"#),
    (#"a == 1 OR"#, 9, #"expected an expression"#),
    (#"AND a == 1"#, 0, #"expected an expression"#),
    (#"a == 1 a == 2"#, 7, #"expected end of input"#),
    (#"a == 1 == 2"#, 7, #"expected end of input (comparisons do not chain)"#),
    (#"a < b < c"#, 6, #"expected end of input (comparisons do not chain)"#),
    (#"(a == 1"#, 7, #"expected ')'"#),
    (#"a == 1)"#, 6, #"expected end of input"#),
    (#"((a == 1)"#, 9, #"expected ')'"#),
    (#"a == (1"#, 7, #"expected ')'"#),
    (#"a + == 1"#, 4, #"expected an expression"#),
    (#"a + 1"#, 5, #"expected a comparison operator"#),
    (#"a * * 2 == 1"#, 4, #"expected an expression"#),
    (#"NOT"#, 3, #"expected an expression"#),
    (#"NOT a"#, 5, #"expected a comparison operator"#),
    (#"NOT 1 + 2"#, 9, #"expected a comparison operator"#),
    (#"!"#, 1, #"expected an expression"#),
    (#"a === 1"#, 4, #"expected an expression"#),
    (#"a = = 1"#, 4, #"expected an expression"#),
    (#"a & b == 1"#, 2, #"unexpected character '&'"#),
    (#"a | b == 1"#, 2, #"unexpected character '|'"#),
    (#"a == 'unterminated"#, 5, #"unterminated string literal (i"#),
    (#"a == "unterminated"#, 5, #"unterminated string literal (i"#),
    (#"a == '\u12'"#, 6, #"expected 4 hexadecimal digits in \u escape"#),
    (#"a == '\u{110000}'"#, 6, #"escape \u{110000} is not a Uni"#),
    (#"a == '\u{D800}'"#, 6, #"escape \u{d800} is not a Unico"#),
    (#"a == '\u{}'"#, 6, #"expected 1 to 8 hexadecimal digits in \u escape"#),
    (#"a == 'x\"#, 5, #"unterminated string literal (i"#),
    (#"a == 1.2.3"#, 8, #"expected end of input"#),
    (#"a == 0x"#, 5, #"expected digits"#),
    (#"a == 0b2"#, 5, #"expected digits"#),
    (#"a == 99999999999999999999"#, 5, #"integer 99999999999999999999 i"#),
    (#"a == -9223372036854775809"#, 6, #"integer -9223372036854775809 i"#),
    (#"a == 9223372036854775808"#, 5, #"integer 9223372036854775808 is"#),
    (#"a == 1e999"#, 5, #"number 1e999 is out of range"#),
    (#"a. == 1"#, 3, #"expected a property name or an aggregate after '.'"#),
    (#"a.b. == 1"#, 5, #"expected a property name or an aggregate after '.'"#),
    (#"a.AND == 1"#, 2, #"expected a property name after '.'"#),
    (#".a == 1"#, 0, #"expected an expression"#),
    (#"a..b == 1"#, 2, #"expected a property name or an aggregate after '.'"#),
    (#"a.1 == 1"#, 2, #"expected a property name or an aggregate after '.'"#),
    (#"a@count == 1"#, 1, #"expected '.' before the aggregate"#),
    (#"a.@foo == 1"#, 2, #"unknown aggregate '@foo'"#),
    (#"a.@ == 1"#, 2, #"expected a name after '@'"#),
    (#"$ == 1"#, 0, #"expected a name after '$'"#),
    (#"$1 == 1"#, 0, #"expected a name after '$'"#),
    (#"@ == 1"#, 0, #"expected a name after '@'"#),
    (#"# == 1"#, 0, #"expected a name after '#'"#),
    (#"a == 1 AND (b == 2"#, 18, #"expected ')'"#),
    (#"a BEGINSWITH"#, 12, #"expected an expression"#),
    (#"BEGINSWITH 'a'"#, 0, #"expected an expression"#),
    (#"a BETWEEN 1"#, 10, #"expected '{' after BETWEEN"#),
    (#"a BETWEEN {1}"#, 10, #"BETWEEN needs exactly two valu"#),
    (#"a BETWEEN {1, 2, 3}"#, 10, #"BETWEEN needs exactly two valu"#),
    (#"a BETWEEN {}"#, 10, #"BETWEEN needs exactly two valu"#),
    (#"a IN {1, 2"#, 10, #"expected '"#),
    (#"a IN {1 2}"#, 8, #"expected '"#),
    (#"a IN {1,}"#, 8, #"expected an expression"#),
    (#"a IN {,1}"#, 6, #"expected an expression"#),
    (#"ANY a"#, 5, #"expected a comparison operator"#),
    (#"ANY a + 1"#, 9, #"expected a comparison operator"#),
    (#"ANY"#, 3, #"expected an expression"#),
    (#"ALL == 1"#, 4, #"expected an expression"#),
    (#"a ==[x] 'b'"#, 5, #"unknown option 'x': the option"#),
    (#"a ==[c 'b'"#, 7, #"expected ']'"#),
    (#"a ==[] 'b'"#, 5, #"expected options 'c'"#),
    (#"a ==[c]] 'b'"#, 7, #"expected an expression"#),
    (#"a ==['c'] 'b'"#, 5, #"expected options 'c'"#),
    (#"uppercas(x) == 1"#, 0, #"unknown function 'uppercas' (d"#),
    (#"foo(x) == 1"#, 0, #"unknown function 'foo'"#),
    (#"uppercase() == 'A'"#, 0, #"uppercase takes 1 argument, fo"#),
    (#"uppercase(a, b) == 'A'"#, 0, #"uppercase takes 1 argument, fo"#),
    (#"now(1) > d"#, 0, #"now takes 0 arguments, found 1"#),
    (#"concat() == ''"#, 0, #"concat takes at least 1 argume"#),
    (#"length(a, b) == 1"#, 0, #"length takes 1 argument, found"#),
    (#"abs() == 1"#, 0, #"abs takes 1 argument, found 0"#),
    (#"uppercase(a == 'b')"#, 12, #"expected '"#),
    (#"f("#, 0, #"unknown function 'f'"#),
    (#"uppercase(a"#, 11, #"expected '"#),
    (#"(a == 1) + 1 == 2"#, 0, #"expected an expression"#),
    (#"(a == 1) == TRUE"#, 0, #"expected an expression"#),
    (#"-(a == 1) == 1"#, 1, #"expected an expression"#),
    (#"{a == 1} == x"#, 3, #"expected '"#),
    (#"TRUEPREDICATE == 1"#, 14, #"expected end of input (comparisons do not chain)"#),
    (#"a == TRUEPREDICATE"#, 5, #"expected an expression"#),
    (#"a == 1 TRUEPREDICATE"#, 7, #"expected end of input"#),
    (#"a == NOT b"#, 5, #"expected an expression"#),
    (#"a ~ 1"#, 2, #"unexpected character '~'"#),
    (#"a == 1;"#, 6, #"unexpected character ';'"#),
    (#"a == €"#, 5, #"unexpected character '€'"#),
    (#"a == 1 AND OR b == 2"#, 11, #"expected an expression"#),
    (#"a == 1 && || b == 2"#, 10, #"expected an expression"#),
    (#"("#, 1, #"expected an expression"#),
    (#")"#, 0, #"expected an expression"#),
    (#"()"#, 1, #"expected an expression"#),
    (#"() == 1"#, 1, #"expected an expression"#),
    (#"a == ()"#, 6, #"expected an expression"#),
    (#"NOT NOT"#, 7, #"expected an expression"#),
    (#"a IN"#, 4, #"expected an expression"#),
    (#"a IN b IN c"#, 7, #"expected end of input (comparisons do not chain)"#),
    (#"a BEGINSWITH 'x' 'y'"#, 17, #"expected end of input"#),
    (#"a == 1 2"#, 7, #"expected end of input"#),
    (#"a.b.c."#, 6, #"expected a property name or an aggregate after '.'"#),
    (#"$x. == 1"#, 4, #"expected a property name or an aggregate after '.'"#),
    (#"$x.@ == 1"#, 3, #"expected a name after '@'"#),
    (#"SELF."#, 5, #"expected a property name or an aggregate after '.'"#),
    (#"a == 1 AND"#, 10, #"expected an expression"#),
    (#"'abc"#, 0, #"unterminated string literal (i"#),
    (#""abc"#, 0, #"unterminated string literal (i"#),
    (#"a == 'ok' AND b == 'bad"#, 19, #"unterminated string literal (i"#),
  ]

  @Test("the tables hold at least 150 cases")
  func tableSize() {
    #expect(Self.valid.count + Self.invalid.count >= 150)
  }

  @Test("a valid predicate prints canonically, and the printing parses to the same tree", arguments: valid)
  func validPredicate(text: String, canonical: String) throws {
    let tree = try QueryPredicate(parsing: text)
    #expect(tree.description == canonical)
    let again = try QueryPredicate(parsing: canonical)
    #expect(again == tree)
    #expect(again.description == canonical)
  }

  @Test("an invalid predicate is a syntax error at the offending position", arguments: invalid)
  func invalidPredicate(text: String, offset: Int, message: String) {
    let error = queryError { _ = try QueryPredicate(parsing: text) }
    #expect(error?.kind == .syntax)
    #expect(error?.offset == offset)
    #expect(error?.message.contains(message) == true, "\(String(describing: error))")
  }

  @Test(
    "value expressions parse and print canonically",
    arguments: [
      ("$source.phone1", "$source.phone1"),
      ("$source", "$source"),
      ("$source.employees", "$source.employees"),
      ("concat($source.firstName, ' ', $source.lastName)", #"concat($source.firstName, " ", $source.lastName)"#),
      ("1", "1"),
      ("'1'", #""1""#),
      ("-1.25", "-1.25"),
      ("(a + b) * 2", "(a + b) * 2"),
      ("coalesce($source.phone1, $source.phone2)", "coalesce($source.phone1, $source.phone2)"),
      ("{1, 'a', nil}", #"{1, "a", nil}"#),
      ("employees.@avg.salary", "employees.@avg.salary"),
      ("now()", "now()"),
      ("((x))", "x"),
    ])
  func expression(text: String, canonical: String) throws {
    let e = try QueryExpression(parsing: text)
    #expect(e.description == canonical)
    #expect(try QueryExpression(parsing: canonical) == e)
  }

  @Test(
    "a predicate is not a value expression",
    arguments: [("a == 1", 2), ("(a == 1)", 0), ("a b", 2), ("", 0), ("a +", 3)])
  func notAnExpression(text: String, offset: Int) {
    let error = queryError { _ = try QueryExpression(parsing: text) }
    #expect(error?.kind == .syntax)
    #expect(error?.offset == offset)
  }

  @Test("keywords are matched without regard to case")
  func keywordCase() throws {
    let upper = try QueryPredicate(parsing: "ANY a.b BEGINSWITH 'x' AND NOT c IN {1} OR d == NIL")
    let mixed = try QueryPredicate(parsing: "aNy a.b BeginsWith 'x' and not c in {1} oR d == nil")
    #expect(upper == mixed)
  }

  @Test("error offsets count characters, not bytes")
  func offsetsInCharacters() {
    #expect(queryError { _ = try QueryPredicate(parsing: "名前 == 'x' ~") }?.offset == 10)
    #expect(queryError { _ = try QueryPredicate(parsing: "'👨‍👩‍👧' == x ~") }?.offset == 9)
    #expect(queryError { _ = try QueryPredicate(parsing: "s == 'e\u{301}' AND") }?.offset == 12)
  }

  @Test("the same text parses to equal trees wherever it was written")
  func offsetsTakeNoPartInEquality() throws {
    let a = try QueryPredicate(parsing: "x == 1")
    let b = try QueryPredicate(parsing: "   (  x==1 )")
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
  }

  @Test("trees built in code print and parse like parsed ones")
  func builtInCode() throws {
    let built = QueryPredicate(
      .or([
        QueryPredicate(.comparison(QueryComparison(.keyPath("phone1"), .notEqual, .literal(.null)))),
        QueryPredicate(.comparison(QueryComparison(.keyPath("phone2"), .notEqual, .literal(.null)))),
      ]))
    #expect(built.description == "phone1 != nil OR phone2 != nil")
    #expect(try QueryPredicate(parsing: "phone1 != nil || phone2 != nil") == built)
  }

  @Test("a property named like a keyword is escaped with #")
  func escapedNames() throws {
    let tree = QueryPredicate(.comparison(QueryComparison(.keyPath("in", "Some"), .equal, .literal(.integer(1)))))
    #expect(tree.description == "#in.#Some == 1")
    #expect(try QueryPredicate(parsing: tree.description) == tree)
  }
}
