/**
 * The API on its own name: an API Gateway custom domain (regional, TLS 1.2 at least) mapped to
 * the stage, with a certificate that either exists already (an ACM ARN in the stack's region) or
 * is made here and validated through a Route 53 hosted zone, which then also gets the alias
 * records. The stack turns the default execute-api endpoint off when this is set, so the name is
 * the only way in (and the only host the dashboard and its CSP name).
 */
import { CfnOutput, Token } from 'aws-cdk-lib';
import {
  ApiMapping,
  DomainName,
  EndpointType,
  type IHttpApi,
  type IHttpStage,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AaaaRecord, ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayv2DomainProperties } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';

export interface HostedZoneIds {
  readonly hostedZoneId: string;
  /** The zone's name, e.g. `example.com`; `domainName` must be in it. */
  readonly zoneName: string;
}

export interface CustomDomainSettings {
  /** The API's host name, e.g. `pdf.example.com`. */
  readonly domainName: string;
  /**
   * An ACM certificate for `domainName`, in the stack's region.
   * @default one made here, validated through `hostedZone` (one of the two is required)
   */
  readonly certificateArn?: string;
  /**
   * A Route 53 public hosted zone holding `domainName`: the certificate (unless
   * `certificateArn`) is validated through it, and it gets A and AAAA alias records to the API.
   * @default none: point a CNAME at the `ApiDomainTarget` output yourself
   */
  readonly hostedZone?: HostedZoneIds;
}

export interface ApiDomainProps extends CustomDomainSettings {
  readonly httpApi: IHttpApi;
  readonly stage: IHttpStage;
}

const HOST_NAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

export class ApiDomain extends Construct {
  readonly domainName: DomainName;
  readonly certificate: ICertificate;
  /** `https://<domainName>/`. */
  readonly url: string;
  /** The host clients call. */
  readonly host: string;

  constructor(scope: Construct, id: string, props: ApiDomainProps) {
    super(scope, id);
    const host = props.domainName.toLowerCase();
    if (!Token.isUnresolved(host) && !HOST_NAME.test(host)) {
      throw new Error(
        `domainName must be a host name such as pdf.example.com, got ${JSON.stringify(props.domainName)}`,
      );
    }
    const zone = props.hostedZone
      ? HostedZone.fromHostedZoneAttributes(this, 'Zone', props.hostedZone)
      : undefined;
    if (zone && !(host === props.hostedZone?.zoneName || host.endsWith(`.${props.hostedZone?.zoneName}`))) {
      throw new Error(`domainName ${host} is not in the hosted zone ${props.hostedZone?.zoneName}`);
    }
    if (props.certificateArn) {
      this.certificate = Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn);
    } else if (zone) {
      this.certificate = new Certificate(this, 'Certificate', {
        domainName: host,
        validation: CertificateValidation.fromDns(zone),
      });
    } else {
      throw new Error(
        'domainName: give certificateArn (an ACM certificate for it in this region) or hostedZoneId and ' +
          'hostedZoneName (a Route 53 zone to validate a new certificate in)',
      );
    }
    this.domainName = new DomainName(this, 'DomainName', {
      domainName: host,
      certificate: this.certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, 'Mapping', { api: props.httpApi, domainName: this.domainName, stage: props.stage });
    if (zone) {
      const target = RecordTarget.fromAlias(
        new ApiGatewayv2DomainProperties(
          this.domainName.regionalDomainName,
          this.domainName.regionalHostedZoneId,
        ),
      );
      new ARecord(this, 'AliasA', { zone, recordName: host, target });
      new AaaaRecord(this, 'AliasAaaa', { zone, recordName: host, target });
    } else {
      new CfnOutput(this, 'Target', {
        key: 'ApiDomainTarget',
        value: this.domainName.regionalDomainName,
        description: `Point a CNAME for ${host} at this name`,
      });
    }
    this.host = host;
    this.url = `https://${host}/`;
  }
}
