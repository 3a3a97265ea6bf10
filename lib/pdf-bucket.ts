/**
 * The bucket for rendered PDFs: private, encrypted, TLS only, and emptied of PDFs after the
 * retention period. CORS only for GET from the dashboard (allowBrowserDownloads), whose preview
 * fetches the PDF through its presigned URL; other browsers only navigate to presigned GET URLs (a
 * plain download, not a cross-origin fetch), and the PUT comes from the renderer Lambda.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  HttpMethods,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** Object keys are `pdf/<accountId>/<jobId>.pdf`. */
export const PDF_KEY_PREFIX = 'pdf/';
/** Account assets: `assets/<accountId>/<upload id>` (functions/domain/assets/assets.ts). */
export const ASSET_KEY_PREFIX = 'assets/';
/** Async renders' orders: `orders/<accountId>/<jobId>.json` (functions/domain/renders/async-renders.ts). */
export const ORDER_KEY_PREFIX = 'orders/';
/** The editor's previews: `previews/<accountId>/<previewId>.pdf` (functions/domain/renders/previews.ts), kept a day. */
export const PREVIEW_KEY_PREFIX = 'previews/';

export interface PdfBucketProps {
  /** Days after which a PDF is deleted; its job then shows `download_url: null`. */
  readonly pdfRetentionDays: number;
  /**
   * Days after which an async render's order is deleted if its consumer did not (it does once the
   * job ends): longer than a job can wait and retry.
   * @default 14
   */
  readonly orderRetentionDays?: number;
  /**
   * Keep the bucket and its PDFs when the stack is deleted.
   * @default true. When false, stack deletion empties and deletes the bucket.
   */
  readonly retainOnDelete?: boolean;
}

export class PdfBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: PdfBucketProps) {
    super(scope, id);
    const retain = props.retainOnDelete ?? true;
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      lifecycleRules: [
        {
          id: 'expire-pdfs',
          prefix: PDF_KEY_PREFIX,
          expiration: Duration.days(props.pdfRetentionDays),
        },
        // The consumer deletes an order when its job ends; this catches what a fault left behind.
        {
          id: 'expire-orders',
          prefix: ORDER_KEY_PREFIX,
          expiration: Duration.days(props.orderRetentionDays ?? 14),
        },
        // A preview is looked at once, in the editor: nothing keeps it longer.
        { id: 'expire-previews', prefix: PREVIEW_KEY_PREFIX, expiration: Duration.days(1) },
        // A renderer that dies mid-upload must not leave invisible parts that are billed forever.
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      autoDeleteObjects: !retain,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Objects are only reached through presigned URLs that the API issues per authenticated request, ' +
        'and the API logs every issue; S3 server access logs would need a second bucket that holds ' +
        'the same information. Accounts that want object-level audit enable CloudTrail data events.',
    });
  }

  get bucketName(): string {
    return this.bucket.bucketName;
  }

  /**
   * Lets pages on these origins read PDFs through their presigned GET URLs (the dashboard's
   * preview); a presigned URL is the credential, CORS only lets the page read the answer.
   */
  allowBrowserDownloads(origins: readonly string[]): void {
    if (origins.length === 0) return;
    this.bucket.addCorsRule({
      allowedMethods: [HttpMethods.GET],
      allowedOrigins: [...origins],
      maxAge: 600,
    });
  }

  /**
   * s3:GetObject and s3:PutObject on PDF keys only: exactly what signing a download URL and an
   * upload URL needs. (Bucket.grantRead/grantPut would add bucket listing and object ACL,
   * retention and tagging rights that nothing here uses.)
   */
  /** s3:PutObject on order keys: the API stores an async render's order. */
  grantWriteOrders(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['s3:PutObject'],
      resourceArns: [this.bucket.arnForObjects(`${ORDER_KEY_PREFIX}*`)],
    });
  }

  /** s3:GetObject and s3:DeleteObject on order keys: the render queue's consumer reads and removes orders. */
  grantConsumeOrders(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetObject', 's3:DeleteObject'],
      resourceArns: [this.bucket.arnForObjects(`${ORDER_KEY_PREFIX}*`)],
    });
  }

  /**
   * Account assets: `manage`, s3:PutObject, s3:GetObject and s3:DeleteObject (the assets
   * function); `read`, s3:GetObject, what signing the renderer's links needs (what renders).
   */
  grantAssets(grantee: IGrantable, mode: 'manage' | 'read'): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: mode === 'manage' ? ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'] : ['s3:GetObject'],
      resourceArns: [this.bucket.arnForObjects(`${ASSET_KEY_PREFIX}*`)],
    });
  }

  grantPresignPdfObjects(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetObject', 's3:PutObject'],
      resourceArns: [this.bucket.arnForObjects(`${PDF_KEY_PREFIX}*`)],
    });
  }
}
