"""Section 2.7 payment body validation (strict: unknown members refused)."""
import re
from decimal import Decimal

from common import ApiError, fmt, obj, s, parse_date, today, nor_bban_ok, iban_ok

CURRENCIES = set("""AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYR BZD
CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GGP GHS GIP GMD GNF GTQ GYD
HKD HNL HRK HTG HUF IDR ILS IMP INR IQD IRR ISK JEP JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD
MAD MDL MGA MKD MMK MNT MOP MRO MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLL SOS SPL SRD STD SVC SYP SZL THB TJS TMT TND TOP TRY TTD TVD TWD TZS
UAH UGX USD UYU UZS VEF VND VUV WST XAF XCD XDR XOF XPF YER ZAR ZMW ZWD""".split())
COUNTRIES = set("""AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP
KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW
SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW""".split())
ZERO_DEC = set("BIF BYR CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF".split())
THREE_DEC = set("BHD IQD JOD KWD LYD OMR TND".split())
NO_MINOR = {"XDR"}  # ISO 4217 lists no minor unit: refused as a payment currency
PURPOSE = set("INVS SALA IDCP CASH CORT INTC PENS SSBE SUPP TAXS TREA VATX LOAN OTHR".split())
BIC_RE = r"[A-Z]{6,6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3,3}){0,1}"
REG_CODES = set("14 26 29 31 35 38 41 43 45 51 52 53 71 79 81 82".split())
FREQUENCIES = set("Daily Weekly EveryTwoWeeks Monthly EveryTwoMonths Quarterly SemiAnnual Annual MonthlyVariable".split())
# Sandbox reference rates (NOK per unit) used only for the NOK 100 000 reporting threshold.
NOK_RATES = {"NOK": Decimal(1), "EUR": Decimal("11.5"), "USD": Decimal("10.5"), "GBP": Decimal("13.5"),
             "SEK": Decimal("1.0"), "DKK": Decimal("1.55"), "CHF": Decimal("12"), "ISK": Decimal("0.08"),
             "PLN": Decimal("2.6"), "JPY": Decimal("0.07")}


def minor_units(cur):
    return 0 if cur in ZERO_DEC else 3 if cur in THREE_DEC else 2


def currency(v, path):
    s(v, path, pattern=r"[A-Z]{3}")
    if v not in CURRENCIES:
        raise fmt("is not a supported ISO 4217 currency code", path)
    return v


def country(v, path):
    s(v, path, maxlen=2)
    if v not in COUNTRIES:
        raise fmt("is not a supported ISO 3166-1 alpha-2 code", path)
    return v


def amount(v, cur, path):
    if not isinstance(v, str):
        raise fmt("must be a string", path)
    if cur in NO_MINOR:
        raise fmt(f"currency {cur} has no minor unit and cannot be used for payments", path)
    m = re.fullmatch(r"(0|[1-9]\d{0,12})(?:\.(\d{1,5}))?", v)
    if not m:
        raise fmt("must be a decimal number with precision 18 and scale 5", path)
    frac = m.group(2) or ""
    if len(frac) != minor_units(cur):
        raise fmt(f"must have exactly {minor_units(cur)} fraction digits for {cur}", path)
    d = Decimal(v)
    if d <= 0:
        raise fmt("must be greater than zero", path)
    return d


def instructed_amount(v, path="instructedAmount"):
    obj(v, path, ("amount", "currency"))
    cur = currency(v["currency"], path + ".currency")
    return amount(v["amount"], cur, path + ".amount"), cur


def bban(v, path, norwegian=True):
    s(v, path, maxlen=30)
    if norwegian and not nor_bban_ok(v):
        raise fmt("is not a valid Norwegian account number (11 digits, mod 11)", path)
    return v


def iban(v, path):
    s(v, path, maxlen=34)
    if not iban_ok(v):
        raise fmt("is not a valid IBAN", path)
    return v


def address(v, path, required_country=True):
    obj(v, path, ("country",) if required_country else (), ("street", "buildingNumber", "postalCode", "city", "country"))
    if "street" in v:
        s(v["street"], path + ".street", maxlen=70)
    for k in ("buildingNumber", "postalCode", "city"):
        if k in v:
            s(v[k], f"{path}.{k}", maxlen=70)
    if "country" in v:
        country(v["country"], path + ".country")


def kid_ok(ref):
    if not re.fullmatch(r"\d{2,25}", ref):
        return False
    digits = [int(c) for c in ref]
    # Luhn (MOD10)
    tot = 0
    for i, dgt in enumerate(reversed(digits[:-1])):
        x = dgt * 2 if i % 2 == 0 else dgt
        tot += x - 9 if x > 9 else x
    if (10 - tot % 10) % 10 == digits[-1]:
        return True
    # MOD11 (weights 2..7 from the right)
    tot = sum(dgt * (2 + i % 6) for i, dgt in enumerate(reversed(digits[:-1])))
    r = 11 - tot % 11
    r = 0 if r == 11 else r
    return r != 10 and r == digits[-1]


def structured_item(v, path):
    obj(v, path, ("reference",), ("referenceType", "referenceIssuer"))
    if not isinstance(v["reference"], str):
        raise fmt("must be a string", path + ".reference")
    if "referenceType" in v:
        s(v["referenceType"], path + ".referenceType", maxlen=35)
    if "referenceIssuer" in v:
        s(v["referenceIssuer"], path + ".referenceIssuer", maxlen=35)
    rtype = v.get("referenceType", "KID").upper()
    if rtype in ("KID", "OCR", "SCOR"):
        if v["reference"].strip() == "":
            raise ApiError(400, "KID_MISSING", f"{path}.reference: KID is missing")
        if not kid_ok(v["reference"]):
            raise ApiError(400, "KID_INVALID", f"{path}.reference: KID fails its MOD10/MOD11 check")
    s(v["reference"], path + ".reference", maxlen=35)


def remittance(b):
    forms = [k for k in ("remittanceInformationUnstructured", "remittanceInformationStructured",
                         "remittanceInformationStructuredArray") if k in b]
    if len(forms) > 1:
        raise fmt("remittance forms are mutually exclusive: " + ", ".join(forms))
    if "remittanceInformationUnstructured" in b:
        s(b["remittanceInformationUnstructured"], "remittanceInformationUnstructured", maxlen=140)
    if "remittanceInformationStructured" in b:
        structured_item(b["remittanceInformationStructured"], "remittanceInformationStructured")
    if "remittanceInformationStructuredArray" in b:
        arr = b["remittanceInformationStructuredArray"]
        if not isinstance(arr, list) or not arr:
            raise fmt("must be a non-empty array", "remittanceInformationStructuredArray")
        if len(arr) > 10:
            raise fmt("at most 10 items", "remittanceInformationStructuredArray")
        for n, it in enumerate(arr):
            structured_item(it, f"remittanceInformationStructuredArray[{n}]")


def exec_date(b):
    if "requestedExecutionDate" in b:
        d = parse_date(b["requestedExecutionDate"], "requestedExecutionDate")
        if d < today():
            raise ApiError(400, "EXECUTION_DATE_INVALID", "requestedExecutionDate is in the past")
        if (d - today()).days > 365:
            raise ApiError(400, "EXECUTION_DATE_INVALID", "requestedExecutionDate more than one year ahead")
        return d
    return None


def e2e(b):
    if "endToEndIdentification" in b:
        s(b["endToEndIdentification"], "endToEndIdentification", maxlen=35, pattern=r"[\x20-\x7e]+")


def purpose(b):
    if "purposeCode" in b:
        s(b["purposeCode"], "purposeCode", enum=PURPOSE)


def ndct(b):
    obj(b, "body", ("instructedAmount", "creditorName", "creditorAccount", "creditorAddress", "debtorAccount"),
        ("creditorAgent", "ultimateDebtor", "remittanceInformationUnstructured", "remittanceInformationStructured",
         "remittanceInformationStructuredArray", "purposeCode", "requestedExecutionDate", "endToEndIdentification"))
    e2e(b)
    amt, cur = instructed_amount(b["instructedAmount"])
    s(b["creditorName"], "creditorName", maxlen=70)
    ca = obj(b["creditorAccount"], "creditorAccount", ("bban", "currency"))
    bban(ca["bban"], "creditorAccount.bban")
    ccur = currency(ca["currency"], "creditorAccount.currency")
    if "creditorAgent" in b:
        s(b["creditorAgent"], "creditorAgent", pattern=BIC_RE)
    elif ccur != "NOK":
        raise fmt("creditorAgent is required for payments to currency accounts", "creditorAgent")
    if cur not in ("NOK", ccur):
        raise fmt("a domestic payment is in NOK or in the creditor account currency", "instructedAmount.currency")
    address(b["creditorAddress"], "creditorAddress")
    da = obj(b["debtorAccount"], "debtorAccount", ("currency",), ("bban", "other"))
    if ("bban" in da) == ("other" in da):
        raise fmt("exactly one of bban or other is required", "debtorAccount")
    if "bban" in da:
        bban(da["bban"], "debtorAccount.bban")
    else:
        o = obj(da["other"], "debtorAccount.other", ("identification", "schemeNameProprietary"))
        s(o["identification"], "debtorAccount.other.identification", maxlen=35)
        s(o["schemeNameProprietary"], "debtorAccount.other.schemeNameProprietary", enum={"creditCardAccount"})
    currency(da["currency"], "debtorAccount.currency")
    if "ultimateDebtor" in b:
        s(b["ultimateDebtor"], "ultimateDebtor", maxlen=70)
    remittance(b)
    purpose(b)
    d = exec_date(b)
    return {"amount": amt, "currency": cur, "execDate": d}


def acct_ref(v, path, bban_norwegian):
    a = obj(v, path, ("currency",), ("bban", "iban"))
    if ("bban" in a) == ("iban" in a):
        raise fmt("exactly one of bban or iban is required", path)
    if "bban" in a:
        bban(a["bban"], path + ".bban", norwegian=bban_norwegian)
    else:
        iban(a["iban"], path + ".iban")
    currency(a["currency"], path + ".currency")
    return a


def debtor_norwegian(a, path):
    if "iban" in a and not a["iban"].startswith("NO"):
        raise fmt("the debtor account must be a Norwegian account of this bank", path)


def ncbct(b):
    obj(b, "body", ("instructedAmount", "creditorName", "creditorAccount", "debtorAccount"),
        ("creditorAgent", "creditorAddress", "remittanceInformationUnstructured", "purposeCode",
         "requestedExecutionDate", "regulatoryReportingCode", "regulatoryReportingInformation",
         "endToEndIdentification"))
    e2e(b)
    amt, cur = instructed_amount(b["instructedAmount"])
    s(b["creditorName"], "creditorName", maxlen=70)
    ca = acct_ref(b["creditorAccount"], "creditorAccount", bban_norwegian=False)
    if "creditorAgent" in b:
        s(b["creditorAgent"], "creditorAgent", pattern=BIC_RE)
    elif "bban" in ca:
        raise fmt("creditorAgent is required when the creditor account is a BBAN", "creditorAgent")
    if "creditorAddress" in b:
        address(b["creditorAddress"], "creditorAddress")
    da = acct_ref(b["debtorAccount"], "debtorAccount", bban_norwegian=True)
    debtor_norwegian(da, "debtorAccount")
    remittance(b)
    purpose(b)
    d = exec_date(b)
    rate = NOK_RATES.get(cur)
    big = rate is None or amt * rate >= 100000
    if "regulatoryReportingCode" in b:
        s(b["regulatoryReportingCode"], "regulatoryReportingCode", enum=REG_CODES)
    if "regulatoryReportingInformation" in b:
        s(b["regulatoryReportingInformation"], "regulatoryReportingInformation", maxlen=140)
    if big:
        for k in ("regulatoryReportingCode", "regulatoryReportingInformation"):
            if k not in b:
                raise fmt(f"{k} is required for transfers of NOK 100 000 or more", k)
    return {"amount": amt, "currency": cur, "execDate": d}


def periodic(b):
    obj(b, "body", ("instructedAmount", "creditorName", "creditorAccount", "debtorAccount", "startDate", "frequency"),
        ("creditorAddress", "ultimateDebtor", "remittanceInformationUnstructured", "purposeCode", "endDate",
         "executionRule", "dayOfExecution", "monthsOfExecution", "endToEndIdentification"))
    e2e(b)
    amt, cur = instructed_amount(b["instructedAmount"])
    if cur != "NOK":
        raise fmt("a periodic domestic payment is in NOK", "instructedAmount.currency")
    s(b["creditorName"], "creditorName", maxlen=70)
    acct_ref(b["creditorAccount"], "creditorAccount", bban_norwegian=True)
    if "creditorAddress" in b:
        address(b["creditorAddress"], "creditorAddress", required_country=False)
    da = acct_ref(b["debtorAccount"], "debtorAccount", bban_norwegian=True)
    debtor_norwegian(da, "debtorAccount")
    if "ultimateDebtor" in b:
        s(b["ultimateDebtor"], "ultimateDebtor", maxlen=70)
    remittance(b)
    purpose(b)
    start = parse_date(b["startDate"], "startDate")
    if start < today():
        raise ApiError(400, "EXECUTION_DATE_INVALID", "startDate is in the past")
    if "endDate" in b:
        end = parse_date(b["endDate"], "endDate")
        if end < start:
            raise ApiError(400, "EXECUTION_DATE_INVALID", "endDate is before startDate")
    if "executionRule" in b:
        s(b["executionRule"], "executionRule", enum={"following", "preceeding"})
    freq = s(b["frequency"], "frequency", enum=FREQUENCIES)
    if "dayOfExecution" in b:
        s(b["dayOfExecution"], "dayOfExecution", pattern=r"\d{1,2}")
        if not 1 <= int(b["dayOfExecution"]) <= 31:
            raise fmt("must be a day of month 1-31", "dayOfExecution")
    if freq == "MonthlyVariable":
        m = b.get("monthsOfExecution")
        if not isinstance(m, list) or not 1 <= len(m) <= 11:
            raise fmt("MonthlyVariable needs a list of 1 to 11 months", "monthsOfExecution")
        for n, x in enumerate(m):
            if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= 12:
                raise fmt("months are integers 1-12", f"monthsOfExecution[{n}]")
        if len(set(m)) != len(m):
            raise fmt("a month is listed more than once", "monthsOfExecution")
    elif "monthsOfExecution" in b:
        raise fmt("only allowed with frequency MonthlyVariable", "monthsOfExecution")
    return {"amount": amt, "currency": cur, "execDate": start}


def parse_body(raw):
    import json
    if not raw:
        raise ApiError(400, "FORMAT_ERROR", "request body is required")
    try:
        txt = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "FORMAT_ERROR", "request body is not UTF-8")

    def no_dupes(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                raise ApiError(400, "FORMAT_ERROR", f"duplicate JSON member '{k}'")
            d[k] = v
        return d

    def bad_const(c):
        raise ApiError(400, "FORMAT_ERROR", f"JSON constant {c} not allowed")
    try:
        return json.loads(txt, object_pairs_hook=no_dupes, parse_constant=bad_const)
    except ApiError:
        raise
    except ValueError as e:
        raise ApiError(400, "FORMAT_ERROR", f"malformed JSON: {e}")
